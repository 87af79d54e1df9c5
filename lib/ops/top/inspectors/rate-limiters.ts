import { RegionLayout } from '../../../foundation/regions/region-layout'
import { placeSlidingWindow } from '../../../components/ratelimit/sliding-window-limiter'
import { placeRedisRule, redisRuleFields } from '../../../components/ratelimit/redis/redis-rule'
import { placeTokenBucket, tokensAvailable } from '../../../components/ratelimit/token-bucket'
import { readRule } from '../../../foundation/live-rules/live-rules'
import { RuleBlock } from '../../../foundation/live-rules/rule-block'
import type { RegionSnapshot } from '../region-snapshot'
import type { RedisRuleView, SlidingWindowView, TokenBucketView } from '../views'

/** A TokenBucket's region: the tokens available now. */
export function inspectTokenBucket(snapshot: RegionSnapshot, now: number): TokenBucketView {
  const f = snapshot.fingerprint
  const layout = new RegionLayout('token-bucket', f.number('lanes'))
  const cells = placeTokenBucket(layout, f.number('rate'), f.number('burst'), 0)
  const region = snapshot.region(layout)
  const at = (offset: number) => region.f64[(region.base + offset) / 8]
  // The block holds the rule in force once changed, else the creating member's (the fingerprint's) values.
  const rules = readRule(new RuleBlock(region, cells.rules), ['rate', 'burst'])
  const { rate, burst } = rules.values
  return {
    type: 'token-bucket',
    rate,
    burst,
    available: tokensAvailable(at(cells.tat), ((now - at(cells.origin)) * rate) / 1000, burst),
    rules,
  }
}

/** A SlidingWindowLimiter's region: the permits used in the window that ends now, and those left. */
export function inspectSlidingWindow(snapshot: RegionSnapshot, now: number): SlidingWindowView {
  const f = snapshot.fingerprint
  const window = f.number('window')
  const buckets = f.number('buckets')
  const layout = new RegionLayout('sliding-window', f.number('lanes'))
  const cells = placeSlidingWindow(layout, f.number('limit'), window, buckets, 0)
  const region = snapshot.region(layout)
  const at = (offset: number) => region.f64[(region.base + offset) / 8]
  const rules = readRule(new RuleBlock(region, cells.rules), ['limit'])
  const limit = rules.values.limit
  const newest = at(cells.epoch)
  const current = Math.max(newest, Math.floor((now - at(cells.origin)) / (window / buckets)))
  // A bucket counts while it is among the last `buckets` both as the region stores them and as of now.
  let used = 0
  for (let k = Math.max(0, current - buckets + 1, newest - buckets + 1); k <= newest; k++)
    used += at(cells.counts + (k % buckets) * 8)
  return { type: 'sliding-window', limit, window, used, available: Math.max(0, limit - used), rules }
}

/** A RedisRateLimiter's rule region: the limit, window and (GCRA) burst in force on this host. */
export function inspectRedisRule(snapshot: RegionSnapshot): RedisRuleView {
  const f = snapshot.fingerprint
  const algorithm = f.has('gcra') ? 'gcra' : 'sliding-window'
  const fields = redisRuleFields(algorithm)
  const { layout, rules: placement } = placeRedisRule(
    f.number('lanes'),
    algorithm,
    fields.map(() => 0),
  )
  const rules = readRule(new RuleBlock(snapshot.region(layout), placement), fields)
  const { limit, window, burst } = rules.values
  return { type: 'redis-rate-limiter', algorithm, limit, window, ...(burst === undefined ? {} : { burst }), rules }
}

// What `bulwark set` and a fleet's watcher attach to a region with live rules found on the host: the component of
// its kind, made with the options its fingerprint holds (those its members agree on), for the moment of a change.
import { BbrLimiter } from '../../components/bbr/bbr-limiter'
import { AdaptiveBulkhead } from '../../components/bulkhead/adaptive-bulkhead'
import { CircuitBreaker } from '../../components/breakers/circuit-breaker'
import type { CircuitBreakerOptions } from '../../components/breakers/circuit-breaker-options'
import { SreBreaker } from '../../components/breakers/sre-breaker'
import { KeyConcurrencyLimiter } from '../../components/key-limits/key-concurrency-limiter'
import { keyLimitShape } from '../../components/key-limits/key-limit-region'
import { KeyedLimiter } from '../../components/ratelimit/keyed-limiter'
import { keyedLimiterShape } from '../../components/ratelimit/keyed-rate-limits'
import { openRedisRule, redisRuleFields } from '../../components/ratelimit/redis/redis-rule'
import { SlidingWindowLimiter } from '../../components/ratelimit/sliding-window-limiter'
import { TokenBucket } from '../../components/ratelimit/token-bucket'
import { RetryBudget } from '../../components/resilience/retry-budget'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import type { RegionKind } from '../kinds/component-kinds'
import type { RegionSnapshot } from './region-snapshot'

/** A component with live rules, attached by its region's fingerprint (the options its members agree on). */
export interface Configurable {
  configure(rule: object): RuleStats
  close(): void
}

export type Attach = (snapshot: RegionSnapshot) => Configurable

/** The kinds of region with live rules (ops/kinds lists every kind): how to attach to one as a member. */
const ATTACH: { readonly [K in RegionKind]?: Attach } = {
  'token-bucket': (s) =>
    new TokenBucket({
      shared: s.sharedName,
      namespace: s.namespace || undefined, // the region's own application namespace, not this command's
      maxMembers: s.fingerprint.number('lanes'),
      rate: s.fingerprint.number('rate'),
      burst: s.fingerprint.number('burst'),
    }),
  'sliding-window': (s) =>
    new SlidingWindowLimiter({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
      limit: s.fingerprint.number('limit'),
      window: s.fingerprint.number('window'),
      buckets: s.fingerprint.number('buckets'),
    }),
  sre: (s) =>
    new SreBreaker({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
      window: s.fingerprint.number('window'),
      buckets: s.fingerprint.number('buckets'),
      success: s.fingerprint.number('success'),
      minimumCalls: s.fingerprint.number('minimumCalls'),
    }),
  circuit: (s) => {
    const f = s.fingerprint
    return new CircuitBreaker({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: f.number('lanes'),
      window: f.number('window'),
      buckets: f.number('buckets'),
      halfOpenCalls: f.number('half'),
      strategy: f.has('slowCallRatio') ? 'slowCallRatio' : f.has('errorCount') ? 'errorCount' : 'errorRatio',
    } as CircuitBreakerOptions)
  },
  // Its `max` is not in the fingerprint (members may differ until a rule is set): any valid value attaches.
  'key-concurrency-limiter': (s) => {
    const { overflowKeys, ...shape } = keyLimitShape(s.fingerprint)
    const sharing = {
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
    }
    return new KeyConcurrencyLimiter({ ...sharing, ...shape, overflow: overflowKeys, max: 1 })
  },
  'keyed-limiter': (s) => {
    const { overflowKeys, ...shape } = keyedLimiterShape(s.fingerprint)
    const sharing = {
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
    }
    return new KeyedLimiter({ ...sharing, ...shape, overflow: overflowKeys })
  },
  // The rule's own region: no Redis client is needed to change it.
  'redis-rate-limiter': (s) => {
    const algorithm = s.fingerprint.has('gcra') ? 'gcra' : 'sliding-window'
    const sharing = { shared: s.sharedName, namespace: s.namespace || undefined, lanes: s.fingerprint.number('lanes') }
    const initial = redisRuleFields(algorithm).map(() => 1)
    const { region, rules } = openRedisRule(sharing, algorithm, initial, 1, () => undefined)
    return { configure: (rule) => rules.configure(rule), close: () => region.close() }
  },
  bbr: (s) =>
    new BbrLimiter({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
      window: s.fingerprint.number('window'),
      buckets: s.fingerprint.number('buckets'),
    }),
  // A pool's bulkheads are each a region (`bulkhead.<namespace>.<pool>.<hash>`): a collection's rule reaches each.
  bulkhead: (s) =>
    new AdaptiveBulkhead({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
      window: s.fingerprint.number('window'),
      buckets: s.fingerprint.number('buckets'),
    }),
  'retry-budget': (s) =>
    new RetryBudget({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
      window: s.fingerprint.number('window'),
      buckets: s.fingerprint.number('buckets'),
      ratio: s.fingerprint.number('ratio'),
      minPerSecond: s.fingerprint.number('minPerSecond'),
    }),
}

/** How to attach to region `name`, by its kind; undefined for a kind without live rules. */
export function attacherOf(name: string): Attach | undefined {
  const kind = name.slice(0, name.indexOf('.'))
  return Object.hasOwn(ATTACH, kind) ? ATTACH[kind as RegionKind] : undefined
}

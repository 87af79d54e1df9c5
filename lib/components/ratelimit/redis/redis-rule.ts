// The live rule of a RedisRateLimiter (docs/rules/live-rules.md): its limit, window and (GCRA) burst, in a rule
// block of a host region of its own. The decisions' state stays in Redis; only the rule is host-wide.
import { InvalidOptionError } from '../../../foundation/errors/invalid-option-error'
import { LiveRules } from '../../../foundation/live-rules/live-rules'
import { placeRules, RATE_SHADOW, type RulePlacement } from '../../../foundation/live-rules/rule-block'
import { RegionLayout } from '../../../foundation/regions/region-layout'
import { SharedRegion } from '../../../foundation/regions/shared-region'
import type { ResolvedSharing } from '../../../foundation/regions/sharing-options'
import { checkNumber, optionalNumber } from '../../../foundation/common/validate'
import type { RedisAlgorithm, ResolvedRedisOptions } from './redis-options'

/** The region kind (`bulwark set`, `bulwark top` and the fleet's rule sources find the limiter's rule by it). */
export const REDIS_RULE_KIND = 'redis-rate-limiter'

// At most a year, as the constructor allows.
export const MAX_REDIS_WINDOW = 365 * 86_400_000

/** The rule's fields for `algorithm`, in the order its block stores them: burst only for GCRA. */
export function redisRuleFields(algorithm: RedisAlgorithm): readonly string[] {
  return algorithm === 'gcra' ? ['limit', 'window', 'burst'] : ['limit', 'window']
}

/**
 * A whole rule validated as the constructor validates these options ([limit, window] or [limit, window, burst]);
 * `hosts` is the constructor's (the insurance limiter's share must stay > 0). Throws InvalidOptionError naming the
 * field.
 */
export function resolveRedisRule(
  algorithm: RedisAlgorithm,
  rule: { limit?: unknown; window?: unknown; burst?: unknown },
  hosts = 1,
): number[] {
  if (algorithm !== 'gcra' && rule.burst !== undefined) {
    throw new InvalidOptionError('burst', rule.burst, "absent unless algorithm is 'gcra'")
  }
  const limit = checkNumber('limit', rule.limit, { above: 0 })
  const window = checkNumber('window', rule.window, { above: 0, max: MAX_REDIS_WINDOW })
  const rate = (limit / hosts) * (1000 / window)
  if (!(window / limit < Infinity) || !(rate > 0)) {
    throw new InvalidOptionError(
      'limit',
      limit,
      'large enough that window / limit is finite and limit / hosts per window is > 0',
    )
  }
  if (algorithm !== 'gcra') return [limit, window]
  return [limit, window, optionalNumber('burst', rule.burst, limit, { above: 0 })]
}

/** The layout of the rule's region: the algorithm is in the fingerprint (it decides the fields). */
export function placeRedisRule(
  lanes: number,
  algorithm: RedisAlgorithm,
  values: readonly number[],
): { layout: RegionLayout; rules: RulePlacement } {
  const layout = new RegionLayout(REDIS_RULE_KIND, lanes).describe(`v2 ${algorithm} rules`)
  return { layout, rules: placeRules(layout, values, RATE_SHADOW) }
}

/**
 * Opens (or attaches to) the rule's region, host-wide with `shared`, else a local one; `apply` is told each rule this
 * member starts to obey (values in redisRuleFields order).
 */
export function openRedisRule(
  sharing: Pick<ResolvedSharing, 'shared' | 'namespace' | 'lanes'>,
  algorithm: RedisAlgorithm,
  values: readonly number[],
  hosts: number,
  apply: (values: Float64Array) => void,
): { region: SharedRegion; rules: LiveRules } {
  const { layout, rules } = placeRedisRule(sharing.lanes, algorithm, values)
  const region = SharedRegion.forComponent(sharing.shared, layout, sharing.namespace)
  const live = new LiveRules(region, rules, {
    fields: redisRuleFields(algorithm),
    resolve: (rule) => resolveRedisRule(algorithm, rule, hosts),
    apply,
  })
  return { region, rules: live }
}

/** The two parameters the scripts take: [limit, window], or for GCRA [emission interval, burst]. */
export function scriptParams(o: ResolvedRedisOptions): [string, string] {
  return o.algorithm === 'gcra' ? [String(o.window / o.limit), String(o.burst)] : [String(o.limit), String(o.window)]
}

/**
 * The longest wait the script can answer, µs, which a reply's wait is clamped to (docs/guide/trust.md): sliding
 * window, the rest of this window and all of the next; GCRA, a burst's worth, or one permit's interval.
 */
export function scriptMaxWaitUs(o: ResolvedRedisOptions): number {
  return 1000 * (o.algorithm === 'gcra' ? Math.max(o.burst, 1) * (o.window / o.limit) : 2 * o.window)
}

// The KeyConcurrencyLimiter's own region: the rule block that holds `max` for every member of the host (the keys'
// counts live in regions of their own, one per key: key-gauge.ts).
import { LiveRules } from '../../foundation/live-rules/live-rules'
import { placeRules, type RulePlacement } from '../../foundation/live-rules/rule-block'
import { RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'
import type { ResolvedSharing } from '../../foundation/regions/sharing-options'
import { checkNumber } from '../../foundation/common/validate'

/** The region kind (`bulwark set` and `bulwark top` find the limiter by it). */
export const KEY_LIMIT_KIND = 'key-concurrency-limiter'

/** The rule's one field. */
export const KEY_LIMIT_FIELDS = ['max'] as const

/** `max`, validated (the constructor's check, and live rules'). */
export function resolveMax(value: unknown): number {
  return checkNumber('max', value, { integer: true, min: 1, max: 2 ** 30 })
}

/**
 * The layout of the limiter's region and where its rule sits. The fingerprint leaves `max` out: members may be
 * made with different values (each obeys its own until the first `configure`, then the rule), as before live rules.
 */
export function placeKeyLimit(lanes: number, max: number): { layout: RegionLayout; rules: RulePlacement } {
  const layout = new RegionLayout(KEY_LIMIT_KIND, lanes).describe('v1 rules')
  return { layout, rules: placeRules(layout, [max]) }
}

/** Opens (or attaches to) the limiter's region; `apply` is told each `max` the live rule makes this member obey. */
export function openKeyLimitRegion(
  sharing: ResolvedSharing,
  max: number,
  apply: (max: number) => void,
): { region: SharedRegion; rules: LiveRules } {
  const { layout, rules } = placeKeyLimit(sharing.lanes, max)
  const region = SharedRegion.forComponent(sharing.shared, layout, sharing.namespace)
  const live = new LiveRules(region, rules, {
    fields: KEY_LIMIT_FIELDS,
    resolve: (rule) => [resolveMax(rule.max)],
    apply: (values) => apply(values[0]),
  })
  return { region, rules: live }
}

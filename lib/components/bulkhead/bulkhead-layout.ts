import { describeLatency, type LatencyPlacement } from '../../admission/limits/latency-layout'
import { PRIORITY_NAMES } from '../../admission/priority'
import { placeRules, type RulePlacement } from '../../foundation/live-rules/rule-block'
import { type LanePlacement, RegionLayout, type WindowPlacement } from '../../foundation/regions/region-layout'
import type { SharedRegion } from '../../foundation/regions/shared-region'

/** Per-member statistics cells: calls admitted and rejected, by class. */
export const STAT = {
  admitted: 0, // + class (4 cells)
  shed: 4, // + class
  invalidReleases: 8,
  cells: 9,
} as const

/** The shadow counters (docs/rules/shadow.md): a call the latency check would shed, by class (slot: the class). */
const SHADOW_LABELS = PRIORITY_NAMES.map((priority) => ({ reason: 'latency', priority }))

export interface BulkheadPlacement {
  layout: RegionLayout
  inFlight: LanePlacement
  stats: LanePlacement
  passes: WindowPlacement
  rts: WindowPlacement
  latency: LatencyPlacement
  rules: RulePlacement
}

/**
 * An adaptive bulkhead's region: requests in flight, statistics, the two rolling windows, the controller and the
 * live rule (`rule`: the creating member's values, in BULKHEAD_RULE_FIELDS order; watchers need not know them).
 */
export function describeBulkhead(
  o: { shared: string | undefined; lanes: number; window: number; buckets: number },
  start: number,
  rule: readonly number[] = [0, 0, 0, 0],
): BulkheadPlacement {
  const layout = new RegionLayout('bulkhead', o.lanes).describe(`v2 window=${o.window} buckets=${o.buckets}`)
  const bucketMs = o.window / o.buckets
  return {
    layout,
    inFlight: layout.lanes64(1, true),
    stats: layout.lanes64(STAT.cells),
    passes: layout.window(o.buckets, bucketMs, start),
    rts: layout.window(o.buckets, bucketMs, start),
    latency: describeLatency(layout),
    rules: placeRules(layout, rule, SHADOW_LABELS),
  }
}

/** Sum of statistics cell `cell` over every lane that ever had a member. */
export function sumLanes(region: SharedRegion, stats: LanePlacement, cell: number): number {
  const first = (region.base + stats.offset) / 8 + cell
  const stride = stats.stride / 8
  let sum = 0
  for (let lane = 0, lanes = region.laneHighWater(); lane < lanes; lane++) sum += region.f64[first + lane * stride]
  return sum
}

import { describeLatency, type LatencyPlacement } from '../../admission/limits/latency-layout'
import { type LanePlacement, RegionLayout, type WindowPlacement } from '../../foundation/regions/region-layout'
import type { SharedRegion } from '../../foundation/regions/shared-region'

/** Per-member statistics cells: calls admitted and rejected, by class. */
export const STAT = {
  admitted: 0, // + class (4 cells)
  shed: 4, // + class
  invalidReleases: 8,
  cells: 9,
} as const

export interface BulkheadPlacement {
  layout: RegionLayout
  inFlight: LanePlacement
  stats: LanePlacement
  passes: WindowPlacement
  rts: WindowPlacement
  latency: LatencyPlacement
}

/** An adaptive bulkhead's region: requests in flight, statistics, the two rolling windows and the controller. */
export function describeBulkhead(
  o: { shared: string | undefined; lanes: number; window: number; buckets: number },
  start: number,
): BulkheadPlacement {
  const layout = new RegionLayout('bulkhead', o.lanes).describe(`v1 window=${o.window} buckets=${o.buckets}`)
  const bucketMs = o.window / o.buckets
  return {
    layout,
    inFlight: layout.lanes64(1, true),
    stats: layout.lanes64(STAT.cells),
    passes: layout.window(o.buckets, bucketMs, start),
    rts: layout.window(o.buckets, bucketMs, start),
    latency: describeLatency(layout),
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

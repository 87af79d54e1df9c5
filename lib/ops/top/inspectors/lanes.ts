import type { LanePlacement } from '../../../foundation/regions/region-layout'
import type { SharedRegion } from '../../../foundation/regions/shared-region'

/** Cell `cell` of the given members' lanes (a per-member value such as the last load each one measured). */
export function laneValues(
  region: SharedRegion,
  placement: LanePlacement,
  cell: number,
  lanes: readonly number[],
): number[] {
  const first = (region.base + placement.offset) / 8 + cell
  const stride = placement.stride / 8
  return lanes.map((lane) => region.f64[first + lane * stride])
}

/** Every lane index that ever had a member. */
export function usedLanes(region: SharedRegion): number[] {
  return Array.from({ length: region.laneHighWater() }, (_, i) => i)
}

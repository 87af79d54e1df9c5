import { RegionLayout, type LanePlacement, type WindowPlacement } from '../shared/region-layout'
import type { ResolvedBbrOptions } from './bbr-options'

/** Per-member statistics cells (one lane each): what was admitted and shed, by class and reason. */
export const STAT = {
  admitted: 0, // + class (4 cells)
  shedInFlight: 4, // + class
  shedDelay: 8, // + class
  invalidReleases: 12,
  load: 13, // this member's last load, permille (for watchers)
  admitFraction: 14, // this member's queueing-delay admit fraction
  cells: 15,
} as const

export interface BbrPlacement {
  layout: RegionLayout
  lastDrop: number
  maxInFlight: number
  inFlight: LanePlacement
  stats: LanePlacement
  passes: WindowPlacement
  rts: WindowPlacement
}

/** The BBR limiter's region: its shared cells, per-member lanes and the two rolling windows. */
export function describeBbr(o: ResolvedBbrOptions, start: number): BbrPlacement {
  const layout = new RegionLayout('bbr', o.shared === undefined ? 1 : o.maxMembers).describe(
    `v1 window=${o.window} buckets=${o.buckets}`,
  )
  return {
    layout,
    lastDrop: layout.cell(-1, true),
    maxInFlight: layout.cell(0, true),
    inFlight: layout.lanes64(1, true),
    stats: layout.lanes64(STAT.cells),
    passes: layout.window(o.buckets, o.bucketMs, start),
    rts: layout.window(o.buckets, o.bucketMs, start),
  }
}

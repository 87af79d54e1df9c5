import { describeLatency, type LatencyPlacement } from '../../admission/limits/latency-layout'
import { placeRules, type RulePlacement } from '../../foundation/live-rules/rule-block'
import { RegionLayout, type LanePlacement, type WindowPlacement } from '../../foundation/regions/region-layout'
import type { SharedRegion } from '../../foundation/regions/shared-region'
import { BBR_RULE_FIELDS, type ResolvedBbrOptions } from './bbr-options'
import { PRIORITY_NAMES, type PriorityName } from '../../admission/priority'

/** Per-member statistics cells (one lane each): what was admitted and shed, by class and reason. */
export const STAT = {
  admitted: 0, // + class (4 cells)
  shedInFlight: 4, // + class
  shedDelay: 8, // + class
  invalidReleases: 12,
  load: 13, // this member's last load, permille (for watchers)
  admitFraction: 14, // this member's queueing-delay admit fraction
  minInFlight: 15, // this member's floor on maxInFlight (for watchers)
  shedLatency: 16, // + class
  cells: 20,
} as const

/** The shadow counters' reasons, in this order, each by class (slot: reason * 4 + class). */
const SHADOW_REASONS = ['in-flight', 'queue-delay', 'latency'] as const

/** The shadow counter of a shed under statistics cell `stat` (STAT.shedInFlight, shedDelay or shedLatency). */
export function shadowSlot(stat: number, p: number): number {
  const reason = stat === STAT.shedDelay ? 1 : stat === STAT.shedLatency ? 2 : 0
  return reason * PRIORITY_NAMES.length + p
}

const SHADOW_LABELS = SHADOW_REASONS.flatMap((reason) => PRIORITY_NAMES.map((priority) => ({ reason, priority })))

export interface BbrPlacement {
  layout: RegionLayout
  lastDrop: number
  maxInFlight: number
  inFlight: LanePlacement
  stats: LanePlacement
  passes: WindowPlacement
  rts: WindowPlacement
  latency: LatencyPlacement
  rules: RulePlacement
}

/**
 * The BBR limiter's region: its shared cells, per-member lanes, the two rolling windows and the live rule (`rule`:
 * the creating member's values, in BBR_RULE_FIELDS order; watchers need not know them).
 */
export function describeBbr(
  o: Pick<ResolvedBbrOptions, 'shared' | 'maxMembers' | 'window' | 'buckets' | 'bucketMs'>,
  start: number,
  rule: readonly number[] = BBR_RULE_FIELDS.map(() => 0),
): BbrPlacement {
  const layout = new RegionLayout('bbr', o.shared === undefined ? 1 : o.maxMembers).describe(
    `v4 window=${o.window} buckets=${o.buckets}`,
  )
  return {
    layout,
    lastDrop: layout.cell(-1, true),
    maxInFlight: layout.cell(0, true),
    inFlight: layout.lanes64(1, true),
    stats: layout.lanes64(STAT.cells),
    passes: layout.window(o.buckets, o.bucketMs, start),
    rts: layout.window(o.buckets, o.bucketMs, start),
    latency: describeLatency(layout),
    rules: placeRules(layout, rule, SHADOW_LABELS),
  }
}

/** Admitted and shed requests of one priority class; shed split by reason. */
export interface PriorityCounts {
  admitted: number
  shedInFlight: number
  shedQueueDelay: number
  shedLatency: number
}

/** The statistics lanes summed over the members that ever used the region (what stats() reports host-wide). */
export interface BbrCounters {
  byPriority: Record<PriorityName, PriorityCounts>
  admitted: number
  /** Every shed counted here: in-flight + queueing delay + latency. */
  shed: number
  shedInFlight: number
  shedQueueDelay: number
  shedLatency: number
  invalidReleases: number
}

/** Sums the statistics lanes of a BBR region: the limiter's stats() and watchers such as `bulwark top` share it. */
export function sumBbrCounters(region: SharedRegion, stats: LanePlacement): BbrCounters {
  const f64 = region.f64
  const first = (region.base + stats.offset) / 8
  const stride = stats.stride / 8
  const lanes = region.laneHighWater()
  const sum = (cell: number) => {
    let total = 0
    for (let lane = 0; lane < lanes; lane++) total += f64[first + lane * stride + cell]
    return total
  }
  const byPriority = {} as Record<PriorityName, PriorityCounts>
  const counters: BbrCounters = {
    byPriority,
    admitted: 0,
    shed: 0,
    shedInFlight: 0,
    shedQueueDelay: 0,
    shedLatency: 0,
    invalidReleases: sum(STAT.invalidReleases),
  }
  PRIORITY_NAMES.forEach((name, c) => {
    const counts = {
      admitted: sum(STAT.admitted + c),
      shedInFlight: sum(STAT.shedInFlight + c),
      shedQueueDelay: sum(STAT.shedDelay + c),
      shedLatency: sum(STAT.shedLatency + c),
    }
    byPriority[name] = counts
    counters.admitted += counts.admitted
    counters.shedInFlight += counts.shedInFlight
    counters.shedQueueDelay += counts.shedQueueDelay
    counters.shedLatency += counts.shedLatency
  })
  counters.shed = counters.shedInFlight + counters.shedQueueDelay + counters.shedLatency
  return counters
}

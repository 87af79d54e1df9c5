import { latencyStats } from '../../../admission/limits/latency-stats'
import { describeBbr, STAT, sumBbrCounters } from '../../../components/bbr/bbr-layout'
import { BBR_RULE_FIELDS } from '../../../components/bbr/bbr-options'
import { readRule } from '../../../foundation/live-rules/live-rules'
import { RuleBlock } from '../../../foundation/live-rules/rule-block'
import { CapacityEstimator } from '../../../components/bbr/capacity-estimator'
import { LaneCounter } from '../../../foundation/regions/lane-counter'
import { RollingWindow } from '../../../foundation/regions/rolling-window'
import type { RegionSnapshot } from '../region-snapshot'
import type { LimiterView } from '../views'
import { laneValues, usedLanes } from './lanes'

/** A BbrLimiter's region, read as its stats() reads it (the per-member values over the live members). */
export function inspectBbr(snapshot: RegionSnapshot, now: number): LimiterView {
  const f = snapshot.fingerprint
  const window = f.number('window')
  const buckets = f.number('buckets')
  const placement = describeBbr(
    { shared: snapshot.sharedName, maxMembers: f.number('lanes'), window, buckets, bucketMs: window / buckets },
    0,
  )
  const region = snapshot.region(placement.layout)
  const live = snapshot.liveSlots()
  // With no live member left (a region whose workers all died), show what the last ones left behind.
  const lanes = live.length > 0 ? live : usedLanes(region)
  const minInFlight = Math.max(0, ...laneValues(region, placement.stats, STAT.minInFlight, lanes))
  const passes = new RollingWindow(region, placement.passes)
  const capacity = new CapacityEstimator(
    passes,
    new RollingWindow(region, placement.rts),
    window / buckets,
    minInFlight,
  )
  const maxInFlight = capacity.limit(now)
  const counters = sumBbrCounters(region, placement.stats)
  return {
    type: 'limiter',
    load: Math.max(0, ...laneValues(region, placement.stats, STAT.load, lanes)),
    inFlight: new LaneCounter(region, placement.inFlight).total(),
    maxInFlight,
    maxPass: capacity.maxPass,
    minRt: capacity.minRt,
    ...counters,
    // A limiter made with `latency: false` leaves these cells at zero (limit 0, not shedding).
    latency: latencyStats(region.f64, (region.base + placement.latency.cells) / 8),
    admitFraction: Math.min(1, ...laneValues(region, placement.stats, STAT.admitFraction, live)),
    rules: readRule(new RuleBlock(region, placement.rules), BBR_RULE_FIELDS),
  }
}

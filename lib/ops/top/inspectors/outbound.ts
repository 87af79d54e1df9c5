import { latencyStats } from '../../../admission/limits/latency-stats'
import { describeBulkhead, STAT, sumLanes } from '../../../components/bulkhead/bulkhead-layout'
import { BULKHEAD_RULE_FIELDS } from '../../../components/bulkhead/bulkhead-options'
import { windowLayout } from '../../../components/breakers/window-options'
import { WindowTally } from '../../../components/breakers/window-tally'
import { placeRetryRules, RETRY_RULE_FIELDS } from '../../../components/resilience/retry-budget'
import { readRule } from '../../../foundation/live-rules/live-rules'
import { RuleBlock } from '../../../foundation/live-rules/rule-block'
import { LaneCounter } from '../../../foundation/regions/lane-counter'
import type { RegionSnapshot } from '../region-snapshot'
import type { BulkheadView, RetryBudgetView } from '../views'
import { windowOptions } from './breakers'

/** An AdaptiveBulkhead's region (one upstream's): its calls, the limit learned from latency, its live rule. */
export function inspectBulkhead(snapshot: RegionSnapshot): BulkheadView {
  const f = snapshot.fingerprint
  const shape = { window: f.number('window'), buckets: f.number('buckets') }
  const placement = describeBulkhead({ shared: snapshot.sharedName, lanes: f.number('lanes'), ...shape }, 0)
  const region = snapshot.region(placement.layout)
  // A statistic's four cells, one per priority class, summed over the lanes.
  const sum = (first: number) =>
    [0, 1, 2, 3].reduce((total, c) => total + sumLanes(region, placement.stats, first + c), 0)
  return {
    type: 'bulkhead',
    inFlight: new LaneCounter(region, placement.inFlight).total(),
    admitted: sum(STAT.admitted),
    shed: sum(STAT.shed),
    latency: latencyStats(region.f64, (region.base + placement.latency.cells) / 8),
    rules: readRule(new RuleBlock(region, placement.rules), BULKHEAD_RULE_FIELDS),
  }
}

/** A RetryBudget's region: the window's first attempts and retries, and the retries the rule in force allows. */
export function inspectRetryBudget(snapshot: RegionSnapshot, now: number): RetryBudgetView {
  const f = snapshot.fingerprint
  const settings = `ratio=${f.number('ratio')} minPerSecond=${f.number('minPerSecond')} rules shadow`
  const w = windowOptions(f, snapshot.sharedName)
  const { layout, placement } = windowLayout('retry-budget', w, settings)
  const rulePlacement = placeRetryRules(layout, 0, 0)
  const region = snapshot.region(layout)
  const tally = new WindowTally(region, placement)
  tally.refresh(now)
  const rules = readRule(new RuleBlock(region, rulePlacement), RETRY_RULE_FIELDS)
  const { ratio, minPerSecond } = rules.values
  const retries = tally.sum
  const requests = tally.count - retries
  const allowed = ratio * requests + (minPerSecond * w.window) / 1000
  return { type: 'retry-budget', requests, retries, available: Math.max(0, Math.ceil(allowed - retries)), rules }
}

import {
  BreakerStateCell,
  CLOSED,
  genOf,
  HALF_OPEN,
  OPEN,
  permitsOf,
  placeBreakerState,
  stateOf,
} from '../../../components/breakers/breaker-state'
import { circuitRuleFields, type CircuitStrategy } from '../../../components/breakers/circuit-breaker-options'
import { placeSreRules, SRE_RULE_FIELDS, sreStats } from '../../../components/breakers/sre-breaker'
import { readRule } from '../../../foundation/live-rules/live-rules'
import { BREAKER_SHADOW, placeRules, RuleBlock } from '../../../foundation/live-rules/rule-block'
import { type ResolvedWindowOptions, windowLayout } from '../../../components/breakers/window-options'
import { WindowTally } from '../../../components/breakers/window-tally'
import type { Fingerprint } from '../fingerprint'
import type { RegionSnapshot } from '../region-snapshot'
import type { CircuitBreakerView, SreBreakerView } from '../views'

const STATE_NAMES: Record<number, CircuitBreakerView['state']> = {
  [CLOSED]: 'closed',
  [OPEN]: 'open',
  [HALF_OPEN]: 'half-open',
}

const STRATEGIES: readonly CircuitStrategy[] = ['errorRatio', 'slowCallRatio', 'errorCount']

/** The window options a breaker's (or a retry budget's) fingerprint holds, for laying its region out again. */
export function windowOptions(f: Fingerprint, shared: string): ResolvedWindowOptions {
  return {
    window: f.number('window'),
    buckets: f.number('buckets'),
    shared,
    namespace: undefined, // only the layout is wanted: the snapshot is already of the right region
    maxMembers: f.number('lanes'),
    now: () => 0,
  }
}

/** An SreBreaker's region: the window's requests and accepts, and the state and drop probability they give. */
export function inspectSre(snapshot: RegionSnapshot, now: number): SreBreakerView {
  const f = snapshot.fingerprint
  const settings = `success=${f.number('success')} minimumCalls=${f.number('minimumCalls')} rules shadow`
  const { layout, placement } = windowLayout('sre', windowOptions(f, snapshot.sharedName), settings)
  const rulePlacement = placeSreRules(layout, 0, 0)
  const region = snapshot.region(layout)
  const tally = new WindowTally(region, placement)
  tally.refresh(now)
  // The rule in force (the constructor's values until a change): what the members decide with.
  const rules = readRule(new RuleBlock(region, rulePlacement), SRE_RULE_FIELDS)
  const stats = sreStats(tally.sum, tally.count, 1 / rules.values.success, rules.values.minimumCalls)
  const failureRatio = stats.calls > 0 ? 1 - stats.accepts / stats.calls : 0
  return { type: 'sre-breaker', ...stats, failureRatio, rules }
}

/** A CircuitBreaker's region: the stored state, since when, and the window counted since the breaker last closed. */
export function inspectCircuit(snapshot: RegionSnapshot, now: number): CircuitBreakerView {
  const f = snapshot.fingerprint
  const strategy = STRATEGIES.find((s) => f.has(s)) ?? 'errorRatio'
  const settings = `half=${f.number('half')} ${strategy} rules shadow`
  const { layout, placement } = windowLayout('circuit', windowOptions(f, snapshot.sharedName), settings)
  const statePlacement = placeBreakerState(layout)
  const fields = circuitRuleFields(strategy)
  const rulePlacement = placeRules(
    layout,
    fields.map(() => 0),
    BREAKER_SHADOW,
  )
  const region = snapshot.region(layout)
  const cell = new BreakerStateCell(region, statePlacement)
  const word = cell.load()
  const tally = new WindowTally(region, placement)
  tally.restartFrom(cell.floor, now)
  const halfOpen = stateOf(word) === HALF_OPEN
  return {
    type: 'circuit-breaker',
    state: STATE_NAMES[stateOf(word)] ?? 'closed',
    stateAge: stateOf(word) === CLOSED && genOf(word) === 0 ? now - snapshot.createdAt : now - cell.since(word, now),
    calls: tally.count,
    badCalls: tally.sum,
    badRatio: tally.count > 0 ? tally.sum / tally.count : 0,
    probesIssued: halfOpen ? permitsOf(word) : 0,
    probesPassed: halfOpen ? cell.passesOf(genOf(word)) : 0,
    rules: readRule(new RuleBlock(region, rulePlacement), fields),
  }
}

// A CircuitBreaker's region (its window, state word and rule block) and the thresholds its rule block holds.
import { LiveRules, type RuleStats } from '../../foundation/live-rules/live-rules'
import { BREAKER_SHADOW, placeRules, type RulePlacement } from '../../foundation/live-rules/rule-block'
import { SharedRegion } from '../../foundation/regions/shared-region'
import type { BreakerState } from './breaker'
import { BreakerStateCell, genOf, HALF_OPEN, permitsOf, placeBreakerState, stateOf } from './breaker-state'
import {
  type CircuitBreakerStats,
  type CircuitStrategy,
  circuitRuleFields,
  circuitRuleValues,
  type ResolvedCircuitOptions,
  resolveCircuitRule,
} from './circuit-breaker-options'
import { windowLayout } from './window-options'
import { WindowTally } from './window-tally'

export const STATE_NAMES: readonly BreakerState[] = ['closed', 'open', 'half-open']

export interface CircuitRegion {
  region: SharedRegion
  tally: WindowTally
  cell: BreakerStateCell
  thresholds: CircuitThresholds
}

/** Lays out and opens (or attaches to) the region a breaker made with options `o` shares with its members. */
export function openCircuitRegion(o: ResolvedCircuitOptions): CircuitRegion {
  // Members must agree on the permit count, or "exactly halfOpenCalls probes" would not hold.
  const { layout, placement } = windowLayout('circuit', o.w, `half=${o.halfOpenCalls} ${o.strategy} rules shadow`)
  const statePlacement = placeBreakerState(layout)
  const values = circuitRuleValues(o)
  const rulePlacement = placeRules(layout, values, BREAKER_SHADOW)
  const region = SharedRegion.forComponent(o.w.shared, layout, o.w.namespace)
  return {
    region,
    tally: new WindowTally(region, placement),
    cell: new BreakerStateCell(region, statePlacement),
    thresholds: new CircuitThresholds(region, rulePlacement, o.strategy, values),
  }
}

/** A member's stats from the state `word` it just observed and its window, synced. */
export function circuitStats(
  word: number,
  strategy: CircuitStrategy,
  tally: WindowTally,
  cell: BreakerStateCell,
  rules: RuleStats,
): CircuitBreakerStats {
  const { count, sum } = tally
  const half = stateOf(word) === HALF_OPEN
  return {
    state: STATE_NAMES[stateOf(word)],
    strategy,
    calls: count,
    badCalls: sum,
    badRatio: count > 0 ? sum / count : 0,
    probesIssued: half ? permitsOf(word) : 0,
    probesPassed: half ? cell.passesOf(genOf(word)) : 0,
    contentionTimeouts: cell.contentionTimeouts,
    rules,
  }
}

/**
 * When a CircuitBreaker trips and how long it stays open: the constructor's values until a live rule replaces them
 * (docs/rules/live-rules.md). One test serves every strategy: a window trips when it holds at least `minimumCalls`
 * calls and `badCalls >= perCall * calls + fixed` (a ratio, or a count of failures).
 */
export class CircuitThresholds {
  slowCallDuration = 0
  minimumCalls = 0
  perCall = 0
  fixed = 0
  openDuration = 0
  /** The live rule block these thresholds obey. */
  declare readonly rules: LiveRules

  constructor(region: SharedRegion, placement: RulePlacement, strategy: CircuitStrategy, values: ArrayLike<number>) {
    this.apply(strategy, values) // the constructor's, until a live rule (applied here if one is in force) replaces it
    this.rules = new LiveRules(region, placement, {
      fields: circuitRuleFields(strategy),
      resolve: (rule) => resolveCircuitRule(strategy, rule),
      apply: (v) => this.apply(strategy, v),
    })
  }

  /** Whether a window of `calls` calls, `bad` of them bad, trips the breaker. */
  trips(calls: number, bad: number): boolean {
    return calls >= this.minimumCalls && bad >= this.perCall * calls + this.fixed
  }

  /** Whether a reported duration is slow; a duration that is not a number is not (comparing a Symbol would throw). */
  isSlow(durationMs: unknown): boolean {
    return typeof durationMs === 'number' && durationMs > this.slowCallDuration
  }

  /** The rule's values, in circuitRuleFields order. */
  private apply(strategy: CircuitStrategy, v: ArrayLike<number>): void {
    const count = strategy === 'errorCount'
    const next = strategy === 'slowCallRatio' ? 2 : 1
    this.perCall = count ? 0 : v[0]
    this.fixed = count ? v[0] : 0
    if (next === 2) this.slowCallDuration = v[1]
    this.minimumCalls = v[next]
    this.openDuration = v[next + 1]
  }
}

import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import type { Switchboard } from '../switches/switchboard'
import type { SharingOptions } from '../../foundation/regions/sharing-options'
import { checkOneOf, checkOptions, optionalNumber, refuseFields, renamedTo } from '../../foundation/common/validate'
import type { BreakerState } from './breaker'
import { MAX_HALF_OPEN_CALLS } from './breaker-state'
import { type ResolvedWindowOptions, resolveWindowOptions } from './window-options'

export type CircuitStrategy = 'errorRatio' | 'slowCallRatio' | 'errorCount'

/** What every strategy takes. */
export interface CircuitCommonOptions extends SharingOptions {
  /** Operators' switches: `breaker:<shared name>` forces this breaker open or closed (docs/guide/degrade.md). */
  switches?: Switchboard
  /** Calls the window must hold before the breaker may open (default 20). */
  minimumCalls?: number
  /** Window length, ms (default 10 000). */
  window?: number
  /** Buckets per window (default 10). */
  buckets?: number
  /** How long the breaker stays open before letting probes through, ms (default 5000). */
  openDuration?: number
  /** Probes a half-open breaker lets through, host-wide when shared (default 1, at most 1000). */
  halfOpenCalls?: number
  /**
   * How long a half-open round waits for its probes to report, ms (default: openDuration, at least 1000). Past it
   * the permits of probes that never reported (their process died, or a caller never called recordSuccess or
   * recordFailure) are handed out again.
   */
  probeTimeout?: number
}

/** Opens when the share of failed calls in the window reaches `failureRatio` (the default strategy). */
export interface CircuitErrorRatioOptions extends CircuitCommonOptions {
  strategy?: 'errorRatio'
  /** Share of failed calls in (0, 1] that opens the breaker (default 0.5). */
  failureRatio?: number
}

/** Opens when the share of calls slower than `slowCallDuration` reaches `slowCallRatio`. */
export interface CircuitSlowCallRatioOptions extends CircuitCommonOptions {
  strategy: 'slowCallRatio'
  /** Share of slow calls in (0, 1] that opens the breaker (default 0.5). */
  slowCallRatio?: number
  /** A call slower than this (ms) is slow (default 1000). */
  slowCallDuration?: number
}

/** Opens when the window holds `failureCount` failed calls. */
export interface CircuitErrorCountOptions extends CircuitCommonOptions {
  strategy: 'errorCount'
  /** Failed calls in the window that open the breaker (default 20). */
  failureCount?: number
}

/** The circuit breaker's options: what trips it depends on `strategy`, and so do the fields that say when. */
export type CircuitBreakerOptions = CircuitErrorRatioOptions | CircuitSlowCallRatioOptions | CircuitErrorCountOptions

/**
 * The fields of a CircuitBreaker's rule that `configure` changes at run time: its strategy's threshold fields,
 * `minimumCalls` and `openDuration` (a field of another strategy is refused).
 */
export type CircuitBreakerRule = Partial<
  Pick<CircuitSlowCallRatioOptions, 'slowCallRatio' | 'slowCallDuration' | 'minimumCalls' | 'openDuration'> &
    Pick<CircuitErrorRatioOptions, 'failureRatio'> &
    Pick<CircuitErrorCountOptions, 'failureCount'>
> &
  ShadowRule

export interface CircuitStateChange {
  from: BreakerState
  to: BreakerState
  /** The clock's time when this instance saw the change. */
  at: number
}

export interface CircuitBreakerStats {
  state: BreakerState
  strategy: CircuitStrategy
  /** Calls counted in the window since the breaker last closed (host-wide when shared). */
  calls: number
  /** Of those, the bad ones: failed ('errorRatio', 'errorCount') or slow ('slowCallRatio'). */
  badCalls: number
  /** badCalls / calls (0 when there were no calls). */
  badRatio: number
  /** Half-open permits handed out in the current round. */
  probesIssued: number
  /** Probes of the current round that passed. */
  probesPassed: number
  /**
   * Calls that gave up on a state word that kept changing under them (bounded, docs/guide/trust.md): refused, or
   * their outcome not counted.
   */
  contentionTimeouts: number
  /** The live rule: its version (0 until `configure` first changed it) and values. */
  rules: RuleStats
}

export interface ResolvedCircuitOptions {
  strategy: CircuitStrategy
  /** The share of bad calls that trips the breaker (ratio strategies), else 0. */
  ratio: number
  /** The number of failed calls that trips the breaker ('errorCount'), else 0. */
  count: number
  slowCallDuration: number
  minimumCalls: number
  openDuration: number
  halfOpenCalls: number
  probeTimeout: number
  w: ResolvedWindowOptions
}

// The fields that say when the breaker trips, by the strategy they belong to.
const TRIP_FIELDS: Record<CircuitStrategy, readonly string[]> = {
  errorRatio: ['failureRatio'],
  slowCallRatio: ['slowCallRatio', 'slowCallDuration'],
  errorCount: ['failureCount'],
}

/** The live rule's fields for `strategy`, in the order its block stores them (docs/rules/live-rules.md). */
export function circuitRuleFields(strategy: CircuitStrategy): readonly string[] {
  return [...TRIP_FIELDS[strategy], 'minimumCalls', 'openDuration']
}

/** A rule's values (in circuitRuleFields order) from resolved options. */
export function circuitRuleValues(o: ResolvedCircuitOptions): number[] {
  const trip =
    o.strategy === 'errorCount' ? [o.count] : o.strategy === 'slowCallRatio' ? [o.ratio, o.slowCallDuration] : [o.ratio]
  return [...trip, o.minimumCalls, o.openDuration]
}

/** Validates a whole rule of `strategy` as the constructor validates these options; its values, defaults applied. */
export function resolveCircuitRule(strategy: CircuitStrategy, rule: Record<string, number>): number[] {
  return circuitRuleValues(resolveCircuitOptions({ ...rule, strategy }))
}

export function resolveCircuitOptions(options: unknown): ResolvedCircuitOptions {
  const o = checkOptions<CircuitErrorRatioOptions & CircuitSlowCallRatioOptions & CircuitErrorCountOptions>(
    options,
    'options',
  ) as Partial<Record<string, unknown>>
  refuseFields(o, { threshold: renamedTo('failureRatio, slowCallRatio or failureCount, by strategy') })
  const strategy =
    o.strategy === undefined
      ? 'errorRatio'
      : checkOneOf<CircuitStrategy>('strategy', o.strategy, ['errorRatio', 'slowCallRatio', 'errorCount'])
  for (const other of Object.keys(TRIP_FIELDS) as CircuitStrategy[]) {
    if (other === strategy) continue
    const misplaced: Record<string, string> = {}
    for (const field of TRIP_FIELDS[other])
      misplaced[field] = `absent unless strategy is '${other}' (it is '${strategy}')`
    refuseFields(o, misplaced)
  }
  const openDuration = optionalNumber('openDuration', o.openDuration, 5000, { min: 0, max: 86_400_000 })
  const ratioField = strategy === 'slowCallRatio' ? 'slowCallRatio' : 'failureRatio'
  return {
    strategy,
    ratio: strategy === 'errorCount' ? 0 : optionalNumber(ratioField, o[ratioField], 0.5, { above: 0, max: 1 }),
    count:
      strategy === 'errorCount'
        ? optionalNumber('failureCount', o.failureCount, 20, { integer: true, min: 1, max: 1e12 })
        : 0,
    slowCallDuration: optionalNumber('slowCallDuration', o.slowCallDuration, 1000, { min: 0, max: 86_400_000 }),
    minimumCalls: optionalNumber('minimumCalls', o.minimumCalls, 20, { integer: true, min: 1, max: 1e12 }),
    openDuration,
    halfOpenCalls: optionalNumber('halfOpenCalls', o.halfOpenCalls, 1, {
      integer: true,
      min: 1,
      max: MAX_HALF_OPEN_CALLS,
    }),
    probeTimeout: optionalNumber('probeTimeout', o.probeTimeout, Math.max(openDuration, 1000), {
      above: 0,
      max: 86_400_000,
    }),
    w: resolveWindowOptions(o, { window: 10_000, buckets: 10 }),
  }
}

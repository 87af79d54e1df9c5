import type { Clock } from '../signals/clock'
import { checkOneOf, checkOptions, optionalNumber } from '../validate'
import { MAX_HALF_OPEN_CALLS } from './breaker-state'
import { type ResolvedWindowOptions, resolveWindowOptions } from './window-options'

export type CircuitStrategy = 'errorRatio' | 'slowCallRatio' | 'errorCount'
export type CircuitState = 'closed' | 'open' | 'half-open'

export interface CircuitBreakerOptions {
  /**
   * What trips the breaker (default 'errorRatio'): the share of failed calls, the share of calls slower than
   * `slowCallDuration`, or the number of failed calls, in the window.
   */
  strategy?: CircuitStrategy
  /**
   * The breaker opens when this is reached: a share in (0, 1] for the ratio strategies (default 0.5), a number of
   * failures for 'errorCount' (default 20).
   */
  threshold?: number
  /** A call slower than this (ms) is slow (default 1000); used by 'slowCallRatio'. */
  slowCallDuration?: number
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
   * How long a half-open round waits for its probes to report, ms (default: openDuration, at least 1000). Past it the permits
   * of probes that never reported (their process died, or a caller never called onSuccess / onFailure) are
   * handed out again.
   */
  probeTimeout?: number
  /** One breaker for every thread and process of the host that uses this name. */
  shared?: string
  /** Attachments a shared breaker accepts (threads x instances across the host; default 64). */
  maxMembers?: number
  /** Monotonic clock, ms (default: the coarse clock). `execute` measures durations with the precise clock. */
  now?: Clock
}

export interface CircuitStateChange {
  from: CircuitState
  to: CircuitState
  /** The clock's time when this instance saw the change. */
  at: number
}

export interface CircuitBreakerStats {
  state: CircuitState
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
}

export interface ResolvedCircuitOptions {
  strategy: CircuitStrategy
  threshold: number
  slowCallDuration: number
  minimumCalls: number
  openDuration: number
  halfOpenCalls: number
  probeTimeout: number
  w: ResolvedWindowOptions
}

export function resolveCircuitOptions(options: unknown): ResolvedCircuitOptions {
  const o = checkOptions<CircuitBreakerOptions>(options, 'options')
  const strategy =
    o.strategy === undefined
      ? 'errorRatio'
      : checkOneOf<CircuitStrategy>('strategy', o.strategy, ['errorRatio', 'slowCallRatio', 'errorCount'])
  const threshold =
    strategy === 'errorCount'
      ? optionalNumber('threshold', o.threshold, 20, { integer: true, min: 1, max: 1e12 })
      : optionalNumber('threshold', o.threshold, 0.5, { above: 0, max: 1 })
  const openDuration = optionalNumber('openDuration', o.openDuration, 5000, { min: 0, max: 86_400_000 })
  return {
    strategy,
    threshold,
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

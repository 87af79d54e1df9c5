import { eventLoopDelay } from '../../foundation/signals/signals'
import { checkOptions, optionalFunction, optionalNumber } from '../../foundation/common/validate'

/** How the adaptive concurrency check learns its limit from latency (docs/rules/latency.md). */
export interface LatencyOptions {
  /**
   * Response-time inflation over the learned base that still counts as no queueing, as a share of the base
   * (default 0.25: up to 1.25 x the base is normal variation).
   */
  buffer: number
  /** The limit never goes below this many requests in flight (default 3). */
  minLimit: number
  /** The limit never goes above this many requests in flight (default 100 000). */
  maxLimit: number
  /**
   * While shedding, the base response time is measured again this long after shedding began, ms (default 1000);
   * the gap doubles (up to 32 x) each time a measurement confirms the base, and returns to this after a change.
   */
  probeInterval: number
  /**
   * This thread's event-loop queueing delay, ms, added to the tolerated response time: a response that waits for
   * our own loop is late without any queue at the upstream, and while the loop is late the requests in flight
   * include answers waiting for it (default: the measured delay, eventLoopDelay(); 0 with an injected clock).
   */
  loopDelay: () => number
}

export const DEFAULT_LATENCY: Readonly<LatencyOptions> = {
  buffer: 0.25,
  minLimit: 3,
  maxLimit: 100_000,
  probeInterval: 1000,
  loopDelay: eventLoopDelay,
}

const noDelay = () => 0

/**
 * Validates latency options; `field` prefixes the names in errors ('latency' inside BbrLimiter options). With an
 * injected clock (`clocked`), the loop's delay defaults to 0: the tests that inject one replay time by hand.
 */
export function resolveLatencyOptions(value: unknown, field: string, clocked = false): LatencyOptions {
  const o = checkOptions<LatencyOptions>(value, field)
  const loopDelay = optionalFunction<() => number>(`${field}.loopDelay`, o.loopDelay)
  const minLimit = optionalNumber(`${field}.minLimit`, o.minLimit, DEFAULT_LATENCY.minLimit, { min: 1, max: 1e9 })
  return {
    buffer: optionalNumber(`${field}.buffer`, o.buffer, DEFAULT_LATENCY.buffer, { min: 0, max: 10 }),
    minLimit,
    maxLimit: optionalNumber(`${field}.maxLimit`, o.maxLimit, Math.max(minLimit, DEFAULT_LATENCY.maxLimit), {
      min: minLimit,
      max: 1e9,
    }),
    probeInterval: optionalNumber(`${field}.probeInterval`, o.probeInterval, DEFAULT_LATENCY.probeInterval, {
      min: 1,
      max: 3_600_000,
    }),
    loopDelay: loopDelay ?? (clocked ? noDelay : DEFAULT_LATENCY.loopDelay),
  }
}

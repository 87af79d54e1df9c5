import type { LatencyStats } from '../../admission/limits/latency-stats'
import type { AdmissionQueueStats } from '../../admission/queue/admission-queue'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import type { BbrCounters, PriorityCounts } from './bbr-layout'
import type { BbrChecks } from './bbr-checks'
import type { CapacityEstimator } from './capacity-estimator'
import type { PriorityName } from '../../admission/priority'

/** What BbrLimiter.stats() returns. */
export interface BbrLimiterStats {
  /** The load signal as stats() reads it, permille. */
  load: number
  /** Requests admitted and not yet released, host-wide when shared. */
  inFlight: number
  /** The capacity estimate (never below minInFlight). */
  maxInFlight: number
  maxPass: number
  /** Smallest bucket mean response time, ms (fractional). */
  minRt: number
  /** Admitted requests, host-wide when shared. */
  admitted: number
  /** Shed requests, host-wide when shared (every reason). */
  shed: number
  /** Shed with Shed.inFlight. */
  shedInFlight: number
  /** Shed with Shed.queueDelay. */
  shedQueueDelay: number
  /** Shed with Shed.latency. */
  shedLatency: number
  /** The adaptive concurrency check (undefined when it is off). */
  latency: LatencyStats | undefined
  /** This thread's event-loop queueing delay at the last control step, ms. */
  queueDelay: number
  /** Share of normal-class requests this thread admits under queueing delay (1 = no shedding). */
  admitFraction: number
  /** The live rule: its version (0 until `configure` first changed it) and values. */
  rules: RuleStats
  /**
   * Fair shedding (undefined when off): the keys over their fair share now, and the requests of light keys decided
   * while some key was heavy.
   */
  fairness: { heavyKeys: string[]; favoured: number } | undefined
  /** This process's admission queue (undefined without `maxWait`, docs/rules/queue.md). */
  queue: AdmissionQueueStats | undefined
  /** release() calls with a token that was not outstanding (ignored). */
  invalidReleases: number
  /** Admitted and shed requests of each priority class, shed split by reason (host-wide when shared). */
  byPriority: Record<PriorityName, PriorityCounts>
}

/** BbrLimiter.stats() from its checks, its capacity estimate (asked first), the counters and what only it knows. */
export function collectBbrStats(
  checks: BbrChecks,
  capacity: CapacityEstimator,
  counters: BbrCounters,
  own: Pick<BbrLimiterStats, 'load' | 'inFlight' | 'maxInFlight' | 'queue'>,
): BbrLimiterStats {
  const { live, latencyCheck, delayCheck, fairness } = checks
  return {
    load: own.load,
    inFlight: own.inFlight,
    maxInFlight: own.maxInFlight,
    maxPass: capacity.maxPass,
    minRt: capacity.minRt,
    ...counters,
    latency: latencyCheck?.stats(),
    queueDelay: delayCheck?.measuredDelay ?? 0,
    admitFraction: delayCheck?.fraction ?? 1,
    rules: live.stats(),
    fairness: fairness && { heavyKeys: fairness.heavyKeys(), favoured: fairness.favoured },
    queue: own.queue,
  }
}

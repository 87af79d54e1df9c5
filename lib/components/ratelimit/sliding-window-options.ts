import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import type { SharingOptions } from './sharing'
import type { PermitQueueStats } from './waiting/permit-queue'
import type { WaitingOptions } from './waiting/limiter-permits'

export interface SlidingWindowLimiterOptions extends SharingOptions, WaitingOptions {
  /** Permits per window (> 0). */
  limit: number
  /** Window length, ms (> 0). */
  window: number
  /** Buckets the window slides by (default 10): the window moves forward one bucket (window / buckets) at a time. */
  buckets?: number
}

/** The fields of a SlidingWindowLimiter's rule that `configure` changes at run time. */
export type SlidingWindowLimiterRule = Partial<Pick<SlidingWindowLimiterOptions, 'limit'>> & ShadowRule

export interface SlidingWindowLimiterStats {
  limit: number
  window: number
  buckets: number
  /** Permits available now (host-wide when shared). */
  available: number
  /** Locks this member took over from a holder that died or stalled inside its critical section. */
  lockTakeovers: number
  /** Takes denied because the lock stayed held past its wait bound, a few ms (docs/guide/trust.md). */
  lockTimeouts: number
  /** tryAcquire calls with a permit count that is not a finite number > 0 (refused, not thrown). */
  invalidArguments: number
  /** The live rule: its version (0 until `configure` first changed it) and values. */
  rules: RuleStats
  /** This process's callers waiting in `acquire` or `reserve` (undefined until one waited). */
  queue?: PermitQueueStats
}

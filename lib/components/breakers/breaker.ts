import type { ExecuteOptions, GuardedFunction } from '../../admission/run-guarded'

/** A breaker's state: an SreBreaker is only ever 'closed' or 'open' (rejecting at random). */
export type BreakerState = 'closed' | 'open' | 'half-open'

/**
 * What every breaker offers (CircuitBreaker, SreBreaker, or your own): the integrations drive any of them through
 * it. Ask before the call, report after it; `execute` does both.
 */
export interface Breaker {
  /** The `shared` name, if the breaker is shared by the host. */
  readonly shared: string | undefined
  /** The current state. Reading it changes nothing. */
  readonly state: BreakerState
  /**
   * Whether the duration passed to recordSuccess / recordFailure changes anything (a slow-call circuit breaker):
   * when false, callers need not time their calls.
   */
  readonly usesDuration: boolean
  /** Whether to make the call. Never throws, never allocates. */
  tryAcquire(): boolean
  /** The permitted call succeeded, after `durationMs` (a missing duration counts as fast). */
  recordSuccess(durationMs?: number): void
  /** The permitted call failed, after `durationMs` (a missing duration counts as fast). */
  recordFailure(durationMs?: number): void
  /** Runs `fn` if permitted and records its outcome; rejects with BreakerOpenError when refused. */
  execute<T>(fn: GuardedFunction<T>, options?: ExecuteOptions): Promise<T>
  /** Detaches from shared memory. Idempotent. */
  close(): void
}

import type { Reservation } from './reservation'

/** What a PermitQueue asks of the limiter it waits on. */
export interface PermitSource {
  /** Takes `n` permits if they are available now (and, with pacing, if the previous grant has drained). */
  tryAcquire(n: number): boolean
  /** Ms until `n` permits could be taken if nobody else takes any (Infinity: never). */
  retryAfterMs(n: number): number
  /** The most permits one call may take (a larger `n` can never be granted). */
  maxPermits(): number
  /** A reservation for `n` permits just taken. */
  reservation(n: number): Reservation
  /**
   * A host-wide count of give-backs (settled reservations, cancels), or undefined for a limiter of this thread
   * alone: a change tells waiters here that permits came back elsewhere.
   */
  givebacks(): number | undefined
}

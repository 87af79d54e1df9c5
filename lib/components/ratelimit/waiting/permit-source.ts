import type { Reservation } from './reservation'

/** What an asynchronous take answered: the permits (as a reservation), or how long to wait before asking again. */
export interface AsyncTake {
  reservation: Reservation | undefined
  /** When refused: ms until the permits could be there. */
  waitMs: number
}

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
  /**
   * For a limiter that decides over the network (Redis): takes `n` permits if they are there, asynchronously.
   * With it, the queue asks one head at a time and `tryAcquire` is not used.
   */
  take?(n: number): Promise<AsyncTake>
}

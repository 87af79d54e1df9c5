import { optionalNumber } from '../../../foundation/common/validate'
import type { Clock } from '../../../foundation/signals/clock'
import { PermitQueue, type PermitQueueStats } from './permit-queue'
import type { PermitSource } from './permit-source'
import { type Adjustable, Reservation } from './reservation'

/** The waiting options every local limiter takes. */
export interface WaitingOptions {
  /** Callers that may wait in `acquire` / `reserve` at once in this process (default 10 000); past it, refused. */
  maxQueue?: number
}

/** The default `maxQueue`: memory stays bounded however many callers arrive (about 40 bytes a waiter). */
export const DEFAULT_MAX_QUEUE = 10_000

export function resolveMaxQueue(o: WaitingOptions): number {
  return optionalNumber('maxQueue', o.maxQueue, DEFAULT_MAX_QUEUE, { integer: true, min: 0, max: 2 ** 30 })
}

/** What a local limiter offers its waiters. */
export interface WaitableLimiter extends Adjustable {
  tryAcquire(n: number): boolean
  retryAfterMs(n: number): number
}

/** Where a shared limiter keeps its give-back sequence word: an Int32Array view and index. */
export interface WakeWord {
  i32: Int32Array
  index: number
}

/**
 * A local limiter's side of waiting: the PermitSource its queue asks, the queue itself (made on the first wait),
 * and the give-back sequence word that wakes waiters in the other processes sharing the limiter.
 */
export class LimiterPermits implements PermitSource {
  private waiters: PermitQueue | undefined = undefined

  constructor(
    private readonly limiter: WaitableLimiter,
    private readonly now: Clock,
    private readonly maxQueue: number,
    /** The most permits one call can take (the burst, the limit): read on each wait, a live rule may change it. */
    readonly maxPermits: () => number,
    private readonly wake: WakeWord | undefined,
    /** What the limiter notes at a grant for a later adjust (the sliding window's epoch). */
    private readonly mark: () => number = () => 0,
  ) {}

  queue(): PermitQueue {
    return (this.waiters ??= new PermitQueue(this, this.now, this.maxQueue))
  }

  tryAcquire(n: number): boolean {
    return this.limiter.tryAcquire(n)
  }

  retryAfterMs(n: number): number {
    return this.limiter.retryAfterMs(n)
  }

  reservation(n: number): Reservation {
    return new Reservation(this.limiter, n, this.mark())
  }

  givebacks(): number | undefined {
    const wake = this.wake
    return wake === undefined ? undefined : Atomics.load(wake.i32, wake.index)
  }

  /** Permits were given back: the other members' waiters see the word move, this process's are served now. */
  givenBack(): void {
    const wake = this.wake
    if (wake !== undefined) Atomics.add(wake.i32, wake.index, 1)
    this.waiters?.given()
  }

  stats(): PermitQueueStats | undefined {
    return this.waiters?.stats()
  }

  close(): void {
    this.waiters?.close()
  }
}

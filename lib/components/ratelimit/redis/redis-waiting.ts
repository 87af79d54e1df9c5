import { InvalidArgumentError } from '../../../foundation/errors/invalid-argument-error'
import { OverloadError } from '../../../foundation/errors/overload-error'
import type { Clock } from '../../../foundation/signals/clock'
import type { AcquireOptions } from '../waiting/acquire-options'
import { PermitQueue } from '../waiting/permit-queue'
import type { AsyncTake } from '../waiting/permit-source'
import { type Adjustable, Reservation } from '../waiting/reservation'
import type { RateLimitDecision } from './pending-decision'

/** The most keys with callers waiting at once in one process: memory stays bounded whatever keys arrive. */
export const MAX_WAITING_KEYS = 1024

const KEEP: Adjustable = { adjust: () => undefined }

/** What waiting asks of RedisRateLimiter. */
export interface FleetLimiter {
  consume(key: string, n: number): Promise<RateLimitDecision>
  /** Moves `key`'s permits by `delta` in Redis (a settle); resolves when Redis has done it (or failed). */
  adjustKey(key: string, delta: number): Promise<void>
  readonly maxCost: number
}

/**
 * RedisRateLimiter's waiting callers: one queue per key with waiters (priority, FIFO, one timer each), whose head
 * asks Redis through `consume` and, when refused, waits the retryAfterMs Redis gave.
 */
export class RedisWaiting {
  private readonly queues = new Map<string, PermitQueue>()

  constructor(
    private readonly limiter: FleetLimiter,
    private readonly now: Clock,
    private readonly maxQueue: number,
    /** The longest a refused head waits before asking again: give-backs on other hosts show then. */
    private readonly pollInterval: number,
  ) {}

  acquire(key: string, n: number, options: AcquireOptions | undefined, reserve: boolean): Promise<unknown> {
    if (typeof key !== 'string') return Promise.reject(new InvalidArgumentError('key', key, 'a string'))
    let queue = this.queues.get(key)
    if (queue === undefined) {
      if (this.queues.size >= MAX_WAITING_KEYS) return Promise.reject(new OverloadError('rate-limit'))
      queue = this.queueOf(key)
      this.queues.set(key, queue)
    }
    const waiting = queue.acquire(n, options, reserve)
    if (queue.length === 0) this.queues.delete(key) // refused at once: nobody waits on it
    return waiting
  }

  close(): void {
    for (const queue of [...this.queues.values()]) queue.close()
    this.queues.clear()
  }

  private queueOf(key: string): PermitQueue {
    const limiter = this.limiter
    // Once Redis has the permits back, this process's waiters on the key ask again.
    const owner: Adjustable = {
      adjust: (delta) => void limiter.adjustKey(key, delta).then(() => delta < 0 && this.queues.get(key)?.given()),
    }
    const source = {
      tryAcquire: () => false,
      retryAfterMs: () => 0,
      maxPermits: () => limiter.maxCost,
      reservation: (n: number) => new Reservation(owner, n),
      givebacks: () => undefined,
      take: (n: number): Promise<AsyncTake> =>
        limiter.consume(key, n).then((d) => ({
          // Permits the insurance limiter granted (Redis unreachable) are settled nowhere: the estimate stands.
          reservation: d.allowed ? new Reservation(d.source === 'insurance' ? KEEP : owner, n) : undefined,
          waitMs: Math.min(d.retryAfterMs, this.pollInterval),
        })),
    }
    const queue: PermitQueue = new PermitQueue(source, this.now, this.maxQueue, undefined, () => {
      if (this.queues.get(key) === queue) this.queues.delete(key)
    })
    return queue
  }
}

import { InvalidArgumentError } from '../../../foundation/errors/invalid-argument-error'
import type { Clock } from '../../../foundation/signals/clock'
import { validPermits } from '../permits'
import { type AcquireOptions, checkAcquireOptions } from './acquire-options'
import { PermitQueue, type PermitQueueStats, type WaiterBudget } from './permit-queue'
import type { PermitSource } from './permit-source'
import type { Reservation } from './reservation'

/** What waiting asks of a KeyedLimiter's table form. */
export interface TableLimits {
  readonly burst: number
  tryAcquire(key: string, n: number): boolean
  retryAfterMs(key: string, n: number): number
  available(key: string): number
}

/** The permits of one key of a table, as its queue asks for them. */
class KeyPermits implements PermitSource {
  constructor(
    private readonly limits: TableLimits,
    private readonly key: string,
  ) {}

  tryAcquire(n: number): boolean {
    return this.limits.tryAcquire(this.key, n)
  }

  retryAfterMs(n: number): number {
    return this.limits.retryAfterMs(this.key, n)
  }

  maxPermits(): number {
    return this.limits.burst
  }

  /** Never asked: the table form has no reserve (KeyedLimiter.reserve refuses it first). */
  reservation(): Reservation {
    throw new InvalidArgumentError('this', 'a KeyedLimiter of the table form', 'the factory form, to reserve')
  }

  /** A table gives nothing back (no reserve): its keys' permits come with time alone, which the alarm waits for. */
  givebacks(): undefined {
    return undefined
  }
}

const RESOLVED = Promise.resolve()

/**
 * Waiting on the table form of a KeyedLimiter (docs/rules/waiting.md, "Keyed limiters"): a key with waiters has a
 * queue of its own (its one timer, priority then FIFO), dropped when its last waiter leaves; a key served at once
 * gets no queue. `maxQueue` bounds the waiters of every key together, so memory stays bounded however many keys
 * callers wait on.
 */
export class TableWaiting {
  private readonly queues = new Map<string, PermitQueue>()
  private readonly budget: WaiterBudget = { waiting: 0 }
  private readonly counts = { queued: 0, granted: 0, timedOut: 0, aborted: 0, refused: 0 }

  constructor(
    private readonly limits: TableLimits,
    private readonly now: Clock,
    private readonly maxQueue: number,
  ) {}

  acquire(key: string, n: number, options: AcquireOptions | undefined): Promise<void> {
    let queue = this.queues.get(key)
    if (queue === undefined) {
      // No waiter on this key: taken now without a queue when the permits are there (a bad argument, an aborted
      // signal or a refusal go to a queue, which answers them as every limiter does).
      if (this.readyNow(key, n, options) && this.limits.tryAcquire(key, n)) return RESOLVED
      const source = new KeyPermits(this.limits, key)
      const made: PermitQueue = new PermitQueue(
        source,
        this.now,
        this.maxQueue,
        undefined,
        () => this.forget(key, made),
        this.budget,
      )
      this.queues.set(key, (queue = made))
    }
    const waiting = queue.acquire(n, options, false) as Promise<void>
    if (queue.length === 0) this.forget(key, queue)
    return waiting
  }

  stats(): PermitQueueStats {
    const sum = { ...this.counts, waiting: this.budget.waiting }
    for (const queue of this.queues.values()) add(sum, queue.stats())
    return sum
  }

  /** Rejects every waiter of every key. */
  close(): void {
    for (const [key, queue] of this.queues) {
      queue.close()
      this.forget(key, queue)
    }
  }

  /** Whether `n` permits of `key` look free now, with valid arguments and no aborted signal. */
  private readyNow(key: string, n: number, options: AcquireOptions | undefined): boolean {
    if (!validPermits(n) || n > this.limits.burst || options?.signal?.aborted === true) return false
    try {
      checkAcquireOptions(options)
    } catch {
      return false
    }
    return this.limits.available(key) >= n
  }

  /** Drops an empty queue, keeping its counts. */
  private forget(key: string, queue: PermitQueue): void {
    if (this.queues.get(key) !== queue) return
    this.queues.delete(key)
    const s = queue.stats()
    add(this.counts, s)
  }
}

function add(into: Omit<PermitQueueStats, 'waiting'>, s: PermitQueueStats): void {
  into.queued += s.queued
  into.granted += s.granted
  into.timedOut += s.timedOut
  into.aborted += s.aborted
  into.refused += s.refused
}

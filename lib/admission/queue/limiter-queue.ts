import { runQueued } from './run-queued'
import type { GuardedFunction, Outcome } from '../run-guarded'
import { AdmissionQueue, type Waiter } from './admission-queue'
import type { AdmissionQueueOptions } from './queue-options'
import { Shed } from '../../foundation/errors/shed'
import { setWaiterAsking } from '../limits/queue-delay-check'

/** What a limiter's queue asks of its limiter. */
export interface QueueingLimiter {
  /** The limiter's clock. */
  readonly now: () => number
  readonly tryAcquire: (p: number, key: string | undefined) => number
  /** Takes back the count of refusal `code` of class `p`: its request waits instead of being shed. */
  readonly forgive: (p: number, code: number) => void
  readonly expectedServiceMs: () => number
  /** How much longer a request refused now may wait, ms, by the latency its checks hold (Infinity: maxWait alone). */
  readonly waitBudget: () => number
}

/**
 * BbrLimiter's side of its admission queue (docs/rules/queue.md): queueing a refused request, asking again for a
 * waiter, and an execute() that waits. Made only with `maxWait`, so that the per-request path of a limiter without
 * a queue tests one field.
 */
export class LimiterQueue {
  declare readonly queue: AdmissionQueue
  declare private readonly limiter: QueueingLimiter
  /** Slots released since the waiters last asked: each lets one waiter ask outside the turn budget. */
  private freed = 0

  constructor(options: AdmissionQueueOptions, limiter: QueueingLimiter) {
    this.limiter = limiter
    this.queue = new AdmissionQueue(options, limiter.now, this.retry)
  }

  /**
   * Lets a request that tryAcquire refused with `code` wait (its refusal is then not counted): `done(token)` is called
   * once, later, with a token, Shed.queueTimeout, or Shed.deadline once fewer than expectedServiceMs() of its own
   * `deadlineMs` (ms left when it starts waiting) would be left, or Shed.queueTimeout once its wait passes the
   * limiter's waitBudget() (docs/rules/queue.md, "A waiter's bound"). Undefined when the queue is full or that budget
   * is already spent (the refusal stands).
   */
  waitForSlot(
    code: number,
    p: number,
    key: string | undefined,
    done: (token: number) => void,
    deadlineMs: number | undefined,
  ): Waiter | undefined {
    const queue = this.queue
    if (!queue.hasRoom) {
      queue.countFull()
      return undefined
    }
    const limiter = this.limiter
    const now = limiter.now()
    const bound = now + limiter.waitBudget()
    if (bound <= now) return undefined // it has waited in the loop as long as its latency allows: shed now
    if (queue.length === 0) this.freed = 0 // slots released before anyone waited are not owed
    limiter.forgive(p, code)
    const own = deadlineMs === undefined ? Infinity : now + deadlineMs - limiter.expectedServiceMs()
    return own <= bound ? queue.wait(p, key, done, own) : queue.wait(p, key, done, bound, Shed.queueTimeout)
  }

  /** execute() of a request refused with `code`: it waits for a slot, then runs `fn` as any admitted call. */
  execute<T>(
    code: number,
    p: number,
    key: string | undefined,
    fn: GuardedFunction<T>,
    signal: AbortSignal | undefined,
    outcomeOf: (token: number) => Outcome,
    retryAfter: number,
  ): Promise<T> {
    const wait = (done: (token: number) => void) => this.waitForSlot(code, p, key, done, undefined)
    return runQueued(wait, code, fn, signal, outcomeOf, retryAfter)
  }

  /**
   * A slot was freed: the waiters are retried soon. True when some wait (until they had the slot, arrivals must go
   * through the limiter's checks, which see it is owed).
   */
  slotFreed(): boolean {
    const queue = this.queue
    if (queue.length === 0) return false
    if (this.freed < queue.length) this.freed++
    queue.slotFreed()
    return true
  }

  /**
   * A waiter asks again; a refusal is not counted (it still waits). While slots released here are unclaimed, the
   * waiter asks outside the turn budget (queue-delay-check.ts): each released slot is one waiter's, and the waiters after it
   * ask as arrivals do, or a release would let every waiter run at once, each holding the loop for its handler.
   * A load signal that throws counts as a refusal: the waiter keeps waiting, and no error leaves the queue's
   * microtask or timer, where no caller would catch it (docs/rules/queue.md).
   */
  private readonly retry = (p: number, key: string | undefined): number => {
    const owed = this.freed > 0
    let token: number
    setWaiterAsking(owed)
    try {
      token = this.limiter.tryAcquire(p, key)
    } catch {
      // Nothing was counted: the checks had not decided. The slots still owed stay owed for the next retry.
      return Shed.inFlight
    } finally {
      setWaiterAsking(false)
    }
    if (token >= 0) {
      if (owed) this.freed--
      return token
    }
    // The drain stops at a refusal: the slots it did not fill are no longer owed.
    this.freed = 0
    this.limiter.forgive(p, token)
    return token
  }
}

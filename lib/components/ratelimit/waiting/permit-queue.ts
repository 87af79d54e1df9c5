import { AbortedError } from '../../../foundation/errors/aborted-error'
import { InvalidArgumentError } from '../../../foundation/errors/invalid-argument-error'
import { OverloadError } from '../../../foundation/errors/overload-error'
import type { Clock } from '../../../foundation/signals/clock'
import { type AcquireOptions, checkAcquireOptions, priorityClass } from './acquire-options'
import { type Alarm, TimerAlarm } from './alarm'
import { DeadlineHeap } from './deadline-heap'
import type { AsyncTake, PermitSource } from './permit-source'
import type { Reservation } from './reservation'
import { type Settle, WaiterLists } from './waiter-lists'

/** While waiting on a limiter shared by the host, how often the head looks for permits given back elsewhere, ms. */
export const GIVEBACK_POLL_MS = 10

export interface PermitQueueStats {
  /** Callers waiting now (this process). */
  waiting: number
  /** Callers that had to wait (the ones served at once are not counted). */
  queued: number
  /** Waiters that got their permits. */
  granted: number
  /** Waiters that reached their maxWait. */
  timedOut: number
  /** Waiters whose signal aborted. */
  aborted: number
  /** Calls refused at once: a wait longer than maxWait, or the queue full (maxQueue). */
  refused: number
}

/** The waiters of several queues counted together (a keyed table's queues share one maxQueue). */
export interface WaiterBudget {
  waiting: number
}

/** Settles a promise as rejected through its resolve function alone (so that a waiter keeps one function, not two). */
class Rejection {
  constructor(private readonly error: unknown) {}
  then(_resolve: unknown, reject: (error: unknown) => void): void {
    reject(this.error)
  }
}

const RESOLVED = Promise.resolve()

/**
 * Callers waiting for a limiter's permits (docs/guide/ratelimit.md, "Waiting"): served in priority order, FIFO
 * within a class, by one alarm for the whole queue: it rings when the head's permits are due (the limiter's
 * retryAfterMs), at the soonest maxWait, and, on a limiter shared by the host, every GIVEBACK_POLL_MS to notice
 * permits given back by another process (a sequence word in the region). No timer, closure or object per waiter:
 * a waiter is its resolve function, its permit count and a deadline entry (docs/rules/waiting.md).
 */
export class PermitQueue {
  private readonly waiters = new WaiterLists()
  private readonly deadlines = new DeadlineHeap()
  private signals: Map<number, { signal: AbortSignal; listener: () => void }> | undefined
  private readonly alarm: Alarm
  /** When the head's permits are due (the limiter's clock), and the give-back count seen then. */
  private readyAt = Infinity
  private seenGivebacks: number | undefined = undefined
  private serving = false
  /** An asynchronous take is in flight (a source with `take`): the queue waits for its answer. */
  private taking = false
  private closed = false
  private readonly counts = { queued: 0, granted: 0, timedOut: 0, aborted: 0, refused: 0 }

  constructor(
    private readonly source: PermitSource,
    private readonly now: Clock,
    readonly maxQueue: number,
    alarm?: (fire: () => void) => Alarm,
    /** Told when the last waiter is gone (a keyed owner then drops the queue). */
    private readonly onIdle?: () => void,
    /** Counts this queue's waiters with other queues': maxQueue then bounds them all. */
    private readonly budget: WaiterBudget = { waiting: 0 },
  ) {
    const fire = (): void => this.ring()
    this.alarm = alarm === undefined ? new TimerAlarm(now, fire) : alarm(fire)
  }

  get length(): number {
    return this.waiters.live
  }

  /** Takes `n` permits now, or waits for them (reserve: resolves with a Reservation). */
  acquire(n: number, options: AcquireOptions | undefined, reserve: boolean): Promise<void | Reservation> {
    let maxWait: number
    let p: number
    try {
      if (typeof n !== 'number' || !(n > 0 && n < Infinity))
        throw new InvalidArgumentError('n', n, 'a finite number > 0')
      const most = this.source.maxPermits()
      if (n > most) throw new InvalidArgumentError('n', n, `at most ${most}, the most one call can ever take`)
      maxWait = checkAcquireOptions(options)
      p = priorityClass(options?.priority)
    } catch (error) {
      return Promise.reject(error)
    }
    const signal = options?.signal
    if (signal?.aborted) return Promise.reject(new AbortedError(signal.reason))
    const source = this.source
    const waiters = this.waiters
    if (!this.closed && source.take === undefined && !this.waitingAhead(p) && source.tryAcquire(n)) {
      return reserve ? Promise.resolve(source.reservation(n)) : RESOLVED
    }
    if (source.take !== undefined && maxWait === 0 && !this.closed) return this.takeNow(source.take(n), reserve)
    const wait = source.take === undefined ? source.retryAfterMs(n) : 0
    // A wait longer than maxWait is still waited: permits given back (settled reservations) may come sooner.
    if (this.closed || maxWait === 0 || waiters.live >= this.maxQueue || this.budget.waiting >= this.maxQueue) {
      this.counts.refused++
      return Promise.reject(new OverloadError('rate-limit', wait < Infinity ? wait / 1000 : 0))
    }
    const now = this.now()
    const list = waiters.list(p)
    const promise = new Promise<void | Reservation>((resolve) => {
      list.push(resolve as Settle)
    })
    const id = waiters.added(p, reserve ? -n : n)
    this.budget.waiting++
    this.deadlines.push(now + maxWait, id)
    this.counts.queued++
    if (signal !== undefined) this.watch(id, signal)
    // A new head (the first waiter, or ahead of every class waiting) sets the alarm for its own permits.
    if (source.take !== undefined) this.serve()
    else if (waiters.live === 1 || waiters.firstClass() === p) this.arm(now, wait)
    else this.alarm.set(this.deadlines.soonest)
    return promise
  }

  /** Permits came back in this process (a settle or cancel): serve the head now. */
  given(): void {
    if (this.waiters.live > 0) queueMicrotask(this.serveSoon)
  }

  stats(): PermitQueueStats {
    return { waiting: this.waiters.live, ...this.counts }
  }

  /** Rejects every waiter (OverloadError 'queue-timeout') and refuses new ones. Idempotent. */
  close(): void {
    this.closed = true
    this.alarm.clear()
    this.budget.waiting -= this.waiters.live
    this.waiters.clear((settle) => settle(new Rejection(new OverloadError('queue-timeout'))))
    this.deadlines.clear()
    this.unwatchAll()
  }

  private readonly serveSoon = (): void => this.serve()

  /** Expires waiters past maxWait, then grants heads while the limiter has their permits. */
  serve(): void {
    if (this.serving) return
    this.serving = true
    try {
      const now = this.now()
      this.expire(now)
      const waiters = this.waiters
      while (waiters.live > 0) {
        const c = waiters.firstClass()
        const raw = waiters.headAmount(c)
        const n = raw < 0 ? -raw : raw
        if (this.source.take !== undefined) return this.takeAsync(waiters.headId(c), n, raw < 0)
        if (!this.source.tryAcquire(n)) return this.arm(now, this.source.retryAfterMs(n))
        this.grant(waiters.headId(c), raw < 0 ? this.source.reservation(n) : undefined)
      }
      this.idle()
    } finally {
      this.serving = false
    }
  }

  private grant(id: number, value: Reservation | undefined): void {
    const settle = this.waiters.remove(id)
    this.budget.waiting--
    this.counts.granted++
    if (this.signals !== undefined) this.unwatch(id)
    settle(value)
  }

  /** Asks an asynchronous source for the head's permits, one head at a time. */
  private takeAsync(id: number, n: number, reserve: boolean): void {
    if (this.taking) return
    this.taking = true
    const take = (this.source.take as (n: number) => Promise<AsyncTake>)(n)
    take.then(
      (answer) => this.taken(id, reserve, answer),
      () => this.taken(id, reserve, { reservation: undefined, waitMs: GIVEBACK_POLL_MS }),
    )
  }

  /** maxWait 0 on an asynchronous source: one ask, no place in the queue. */
  private takeNow(take: Promise<AsyncTake>, reserve: boolean): Promise<void | Reservation> {
    return take.then((answer) => {
      if (answer.reservation !== undefined) return reserve ? answer.reservation : undefined
      this.counts.refused++
      throw new OverloadError('rate-limit', answer.waitMs / 1000)
    })
  }

  private taken(id: number, reserve: boolean, answer: AsyncTake): void {
    this.taking = false
    const reservation = answer.reservation
    if (reservation === undefined) {
      if (this.waiters.live > 0) this.arm(this.now(), answer.waitMs)
      return
    }
    // A waiter that left while its permits were being taken: they go back.
    if (!this.waiters.isLive(id) || this.closed) reservation.cancel()
    else this.grant(id, reserve ? reservation : undefined)
    this.serve()
  }

  private ring(): void {
    if (this.waiters.live === 0) return
    // A poll that finds nothing given back and the head not yet due only sets the alarm again.
    const givebacks = this.source.givebacks()
    const now = this.now()
    if (now < this.readyAt && givebacks === this.seenGivebacks && now < this.deadlines.soonest) {
      return this.alarm.set(Math.min(this.readyAt, this.deadlines.soonest, now + GIVEBACK_POLL_MS))
    }
    this.serve()
  }

  /** Sets the alarm for the head's permits `wait` ms from now, the soonest maxWait, or the next give-back poll. */
  private arm(now: number, wait: number): void {
    const givebacks = this.source.givebacks()
    this.seenGivebacks = givebacks
    this.readyAt = now + (wait > 0 ? wait : 0)
    const poll = givebacks === undefined ? Infinity : now + GIVEBACK_POLL_MS
    this.alarm.set(Math.min(this.readyAt, this.deadlines.soonest, poll))
  }

  private expire(now: number): void {
    const heap = this.deadlines
    const waiters = this.waiters
    while (heap.size > 0 && heap.soonest <= now) {
      const id = heap.soonestId
      heap.pop()
      if (waiters.isLive(id)) this.drop(id, new OverloadError('queue-timeout'), 'timedOut')
    }
    // Entries of waiters already served or gone: rebuilt away once they outnumber the live ones.
    if (heap.size > 2 * waiters.live + 64) heap.rebuild((id) => waiters.isLive(id))
  }

  /** Settles a live waiter with `error` and frees its place. */
  private drop(id: number, error: Error, count: 'timedOut' | 'aborted'): void {
    const settle = this.waiters.remove(id)
    this.budget.waiting--
    this.counts[count]++
    if (this.signals !== undefined) this.unwatch(id)
    settle(new Rejection(error))
    if (this.waiters.live === 0) this.idle()
  }

  /** Whether a live waiter of class `p` or higher waits: a new caller of class p then queues behind it. */
  private waitingAhead(p: number): boolean {
    return this.waiters.live > 0 && this.waiters.firstClass() <= p
  }

  /** Nobody waits: the alarm stops, the storage is given back. */
  private idle(): void {
    this.alarm.clear()
    this.readyAt = Infinity
    this.deadlines.clear()
    this.waiters.clear(() => undefined)
    this.onIdle?.()
  }

  private watch(id: number, signal: AbortSignal): void {
    const listener = (): void => {
      if (this.waiters.isLive(id)) {
        this.drop(id, new AbortedError(signal.reason), 'aborted')
        this.given() // the head may have changed
      }
    }
    signal.addEventListener('abort', listener, { once: true })
    ;(this.signals ??= new Map()).set(id, { signal, listener })
  }

  private unwatch(id: number): void {
    const watched = (this.signals as Map<number, { signal: AbortSignal; listener: () => void }>).get(id)
    if (watched === undefined) return
    this.signals?.delete(id)
    watched.signal.removeEventListener('abort', watched.listener)
  }

  private unwatchAll(): void {
    if (this.signals === undefined) return
    for (const { signal, listener } of this.signals.values()) signal.removeEventListener('abort', listener)
    this.signals.clear()
  }
}

import { AbortedError } from '../../../foundation/errors/aborted-error'
import { InvalidArgumentError } from '../../../foundation/errors/invalid-argument-error'
import { OverloadError } from '../../../foundation/errors/overload-error'
import type { Clock } from '../../../foundation/signals/clock'
import { type AcquireOptions, checkAcquireOptions, priorityClass } from './acquire-options'
import { type Alarm, TimerAlarm } from './alarm'
import { DeadlineHeap } from './deadline-heap'
import type { PermitSource } from './permit-source'
import type { Reservation } from './reservation'

/** Priority classes: critical, high, normal, low. A waiter's id is its sequence in its class times 4, plus the class. */
const CLASSES = 4
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

type Settle = (value?: unknown) => void

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
  private readonly settles: Array<Array<Settle | undefined>> = [[], [], [], []]
  /** Permits per waiter; negative for a reserve() (resolved with a Reservation). */
  private readonly amounts: number[][] = [[], [], [], []]
  private readonly heads = [0, 0, 0, 0]
  /** The class sequence number of index 0 of each class's arrays. */
  private readonly bases = [0, 0, 0, 0]
  private live = 0
  private readonly deadlines = new DeadlineHeap()
  private signals: Map<number, { signal: AbortSignal; listener: () => void }> | undefined
  private readonly alarm: Alarm
  /** When the head's permits are due (the limiter's clock), and the give-back count seen then. */
  private readyAt = Infinity
  private seenGivebacks: number | undefined = undefined
  private serving = false
  private closed = false
  private readonly counts = { queued: 0, granted: 0, timedOut: 0, aborted: 0, refused: 0 }

  constructor(
    private readonly source: PermitSource,
    private readonly now: Clock,
    readonly maxQueue: number,
    alarm?: (fire: () => void) => Alarm,
  ) {
    const fire = (): void => this.ring()
    this.alarm = alarm === undefined ? new TimerAlarm(now, fire) : alarm(fire)
  }

  get length(): number {
    return this.live
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
    if (!this.closed && !this.waitingAhead(p) && source.tryAcquire(n)) {
      return reserve ? Promise.resolve(source.reservation(n)) : RESOLVED
    }
    const wait = source.retryAfterMs(n)
    // A wait longer than maxWait is still waited: permits given back (settled reservations) may come sooner.
    if (this.closed || maxWait === 0 || this.live >= this.maxQueue) {
      this.counts.refused++
      return Promise.reject(new OverloadError('rate-limit', wait < Infinity ? wait / 1000 : 0))
    }
    const now = this.now()
    const list = this.settles[p]
    const id = (this.bases[p] + list.length) * CLASSES + p
    const promise = new Promise<void | Reservation>((resolve) => {
      list.push(resolve as Settle)
    })
    this.amounts[p].push(reserve ? -n : n)
    this.deadlines.push(now + maxWait, id)
    this.live++
    this.counts.queued++
    if (signal !== undefined) this.watch(id, signal)
    // A new head (the first waiter, or ahead of every class waiting) sets the alarm for its own permits.
    if (this.live === 1 || this.firstClass() === p) this.arm(now, wait)
    else this.alarm.set(this.deadlines.soonest)
    return promise
  }

  /** Permits came back in this process (a settle or cancel): serve the head now. */
  given(): void {
    if (this.live > 0) queueMicrotask(this.serveSoon)
  }

  stats(): PermitQueueStats {
    return { waiting: this.live, ...this.counts }
  }

  /** Rejects every waiter (OverloadError 'queue-timeout') and refuses new ones. Idempotent. */
  close(): void {
    this.closed = true
    this.alarm.clear()
    for (let c = 0; c < CLASSES; c++) {
      const list = this.settles[c]
      for (let i = this.heads[c]; i < list.length; i++) {
        const settle = list[i]
        if (settle !== undefined) settle(new Rejection(new OverloadError('queue-timeout')))
      }
      this.reset(c)
    }
    this.live = 0
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
      while (this.live > 0) {
        const c = this.firstClass()
        const i = this.heads[c]
        const raw = this.amounts[c][i]
        const n = raw < 0 ? -raw : raw
        if (!this.source.tryAcquire(n)) return this.arm(now, this.source.retryAfterMs(n))
        const settle = this.settles[c][i] as Settle
        this.settles[c][i] = undefined
        this.heads[c] = i + 1
        this.live--
        this.counts.granted++
        if (this.signals !== undefined) this.unwatch((this.bases[c] + i) * CLASSES + c)
        if (i > 1024 && 2 * i > this.settles[c].length) this.compact(c)
        settle(raw < 0 ? this.source.reservation(n) : undefined)
      }
      this.idle()
    } finally {
      this.serving = false
    }
  }

  private ring(): void {
    if (this.live === 0) return
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
    while (heap.size > 0 && heap.soonest <= now) {
      const id = heap.soonestId
      heap.pop()
      if (this.isLive(id)) this.drop(id, new OverloadError('queue-timeout'), 'timedOut')
    }
    // Entries of waiters already served or gone: rebuilt away once they outnumber the live ones.
    if (heap.size > 2 * this.live + 64) heap.rebuild((id) => this.isLive(id))
  }

  /** Settles a live waiter with `error` and frees its place. */
  private drop(id: number, error: Error, count: 'timedOut' | 'aborted'): void {
    const c = id % CLASSES
    const i = (id - c) / CLASSES - this.bases[c]
    const settle = this.settles[c][i] as Settle
    this.settles[c][i] = undefined
    this.live--
    this.counts[count]++
    if (this.signals !== undefined) this.unwatch(id)
    settle(new Rejection(error))
    if (this.live === 0) this.idle()
  }

  private isLive(id: number): boolean {
    const c = id % CLASSES
    const i = (id - c) / CLASSES - this.bases[c]
    return i >= this.heads[c] && i < this.settles[c].length && this.settles[c][i] !== undefined
  }

  /** Whether a live waiter of class `p` or higher waits: a new caller of class p then queues behind it. */
  private waitingAhead(p: number): boolean {
    if (this.live === 0) return false
    const first = this.firstClass()
    return first <= p
  }

  /** The highest class with a live waiter (skipping the gone ones at each head); call with live > 0. */
  private firstClass(): number {
    for (let c = 0; c < CLASSES; c++) {
      const list = this.settles[c]
      let head = this.heads[c]
      while (head < list.length && list[head] === undefined) head++
      this.heads[c] = head
      if (head < list.length) return c
      if (list.length > 0) this.reset(c)
    }
    return CLASSES - 1
  }

  /** Nobody waits: the alarm stops, the storage is given back. */
  private idle(): void {
    this.alarm.clear()
    this.readyAt = Infinity
    this.deadlines.clear()
    for (let c = 0; c < CLASSES; c++) this.reset(c)
  }

  /** Empties class c's arrays (every entry in them is served or gone), moving its base past them. */
  private reset(c: number): void {
    const list = this.settles[c]
    if (list.length === 0) return
    this.bases[c] += list.length
    list.length = 0
    this.amounts[c].length = 0
    this.heads[c] = 0
  }

  /** Drops class c's served head from its arrays (the ids of the waiters after it stay valid through `bases`). */
  private compact(c: number): void {
    const head = this.heads[c]
    this.settles[c].splice(0, head)
    this.amounts[c].splice(0, head)
    this.bases[c] += head
    this.heads[c] = 0
  }

  private watch(id: number, signal: AbortSignal): void {
    const listener = (): void => {
      if (this.isLive(id)) {
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

import { Shed } from '../../foundation/errors/shed'
import { OwnDeadlines } from './own-deadlines'
import { QueueEntry as Entry, type Waiter } from './queue-entry'
import type { AdmissionQueueOptions } from './queue-options'
import type { AdmissionQueueStats } from './queue-stats'

export type { Waiter } from './queue-entry'
export type { AdmissionQueueStats } from './queue-stats'

/** The number of priority classes (critical, high, normal, low: index 0 first). */
const CLASSES = 4
/** The queue is under pressure once its oldest waiter is older than this share of maxWait (CoDel's target). */
const TARGET_SHARE = 0.25
/** Whatever else happens, the queue looks for free slots at least this often while it holds waiters, ms. */
const MAX_POLL = 10

/**
 * A short adaptive queue in front of a limiter (docs/rules/queue.md): a request the limiter refuses waits for a slot
 * instead, at most `maxWait` ms. Higher classes go first. Within a class, waiters are served oldest first while the
 * queue is young, and newest first once its oldest waiter has been waiting longer than the target (a quarter of
 * maxWait; CoDel judges a queue by this sojourn time): under a standing queue, the newest waiter is the one still
 * likely to be served in time, and the old ones time out at their deadline. Waiters are retried when a slot is freed
 * (`slotFreed`) and on a timer; the queue is per process.
 */
export class AdmissionQueue {
  readonly maxWait: number
  readonly maxQueue: number
  private readonly target: number
  /** Waiters by class, oldest first; cancelled ones stay (done undefined) until an end reaches them. */
  private readonly classes: Entry[][] = Array.from({ length: CLASSES }, () => [])
  private readonly heads = new Int32Array(CLASSES)
  private live = 0
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  /** When the timer fires (the limiter's clock). */
  private timerAt = Infinity
  /** Live waiters whose own deadline comes before at + maxWait. */
  private readonly ownDeadlines = new OwnDeadlines()
  private drainQueued = false
  private closed = false
  private queuedCount = 0
  private admittedCount = 0
  private timedOutCount = 0
  private abandonedCount = 0
  private fullCount = 0

  /**
   * `tryAdmit(p, key)` asks the limiter again for a waiter of class `p`: a token, or a negative Shed code (a refusal
   * the limiter does not count: the request is still waiting).
   */
  constructor(
    options: AdmissionQueueOptions,
    private readonly now: () => number,
    private readonly tryAdmit: (p: number, key: string | undefined) => number,
  ) {
    this.maxWait = options.maxWait
    this.maxQueue = options.maxQueue
    this.target = options.maxWait * TARGET_SHARE
  }

  /** Whether a refused request may wait (the queue has room and is open). */
  get hasRoom(): boolean {
    return this.live < this.maxQueue && !this.closed
  }

  get length(): number {
    return this.live
  }

  /** Counts a request refused at once because the queue was full. */
  countFull(): void {
    this.fullCount++
  }

  /**
   * Whether a slot was freed for the waiters and they have not had it yet (their retry runs in a microtask): a new
   * arrival then must not take that slot ahead of them.
   */
  get owed(): boolean {
    return this.drainQueued
  }

  /**
   * Queues a refused request of class `p` (check `hasRoom` first). `done(token)` is called once, never before this
   * returns: a token >= 0 when it was admitted (release it as any other), Shed.queueTimeout after maxWait, or
   * `shedAs` at `until` (the limiter's clock) when that comes first: Shed.deadline for the request's own deadline,
   * less the time its service takes; Shed.queueTimeout for the wait its latency allows.
   */
  wait(
    p: number,
    key: string | undefined,
    done: (token: number) => void,
    until = Infinity,
    shedAs: number = Shed.deadline,
  ): Waiter {
    const at = this.now()
    const entry = new Entry(this, p, key, at, this.maxWait, Math.min(until, at + this.maxWait), done, shedAs)
    this.classes[p].push(entry)
    this.live++
    this.queuedCount++
    this.ownDeadlines.added(entry)
    if (this.timer === undefined) this.arm(this.oldestAt())
    else if (entry.until < this.timerAt) {
      clearTimeout(this.timer)
      this.arm(this.oldestAt())
    }
    return entry
  }

  /** A slot was freed (a release): the waiters are retried soon, once per burst of releases. */
  slotFreed(): void {
    if (this.live === 0 || this.drainQueued) return
    this.drainQueued = true
    queueMicrotask(this.drainSoon)
  }

  /** Expires waiters past their deadline, then admits waiters while the limiter takes them. */
  drain(): void {
    let now = this.now()
    this.expire(now)
    while (this.live > 0) {
      // An admitted waiter's handler may have run for a while: those whose time came meanwhile are shed first.
      if (this.now() !== now) {
        now = this.now()
        this.expire(now)
        if (this.live === 0) break
      }
      const p = this.firstClass()
      const lifo = now - this.oldestAt() >= this.target
      const entry = lifo ? this.newest(p) : this.oldest(p)
      const token = this.tryAdmit(p, entry.key)
      if (token < 0) break
      this.take(p, lifo)
      this.ownDeadlines.removed(entry)
      this.admittedCount++
      this.finish(entry, token)
    }
  }

  /** Frees a waiter's place (its caller went away): false when it was no longer waiting. */
  abandon(entry: Entry): boolean {
    if (entry.done === undefined) return false
    entry.done = undefined
    this.live--
    this.ownDeadlines.removed(entry)
    this.abandonedCount++
    this.compact(entry.p)
    return true
  }

  stats(): AdmissionQueueStats {
    return {
      length: this.live,
      maxQueue: this.maxQueue,
      maxWait: this.maxWait,
      lifo: this.live > 0 && this.now() - this.oldestAt() >= this.target,
      queued: this.queuedCount,
      admitted: this.admittedCount,
      timedOut: this.timedOutCount,
      abandoned: this.abandonedCount,
      full: this.fullCount,
    }
  }

  /** Sheds every waiter (Shed.queueTimeout) and takes no more. Idempotent. */
  close(): void {
    this.closed = true
    this.live = 0
    this.ownDeadlines.clear()
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.timerAt = Infinity
    for (let p = 0; p < CLASSES; p++) {
      const list = this.classes[p]
      for (let i = this.heads[p]; i < list.length; i++) this.timeOut(list[i], Shed.queueTimeout)
      list.length = 0
      this.heads[p] = 0
    }
  }

  private readonly drainSoon = (): void => {
    this.drainQueued = false
    this.drain()
  }

  private readonly onTimer = (): void => {
    this.timer = undefined
    this.timerAt = Infinity
    try {
      this.drain()
    } finally {
      // Even when a waiter's callback threw: the others' deadlines still need the timer.
      if (this.live > 0 && !this.closed) this.arm(this.oldestAt())
    }
  }

  /**
   * Sets the timer: at the oldest waiter's maxWait or the soonest own deadline, or sooner to look for slots freed
   * elsewhere on the host.
   */
  private arm(oldestAt: number): void {
    const now = this.now()
    const untilDeadline = Math.min(oldestAt + this.maxWait, this.ownDeadlines.next) - now
    const poll = Math.min(MAX_POLL, this.target)
    const ms = Math.max(1, Math.min(untilDeadline, poll))
    this.timerAt = now + ms
    this.timer = setTimeout(this.onTimer, ms)
    this.timer.unref?.()
  }

  /** Sheds the waiters that waited maxWait, then those whose own deadline came. */
  private expire(now: number): void {
    const deadline = this.maxWait
    for (let p = 0; p < CLASSES; p++) {
      const list = this.classes[p]
      let head = this.heads[p]
      while (head < list.length && (list[head].done === undefined || now - list[head].at >= deadline)) {
        const entry = list[head++]
        if (entry.done !== undefined) {
          this.live--
          this.ownDeadlines.removed(entry)
          this.timeOut(entry, Shed.queueTimeout)
        }
      }
      this.heads[p] = head
      this.compact(p)
    }
    // Then the waiters whose own deadline came (Shed.deadline), wherever they wait.
    if (this.ownDeadlines.next <= now) {
      this.ownDeadlines.expire(now, this.classes, this.heads, this.shedAtDeadline)
      for (let p = 0; p < CLASSES; p++) this.compact(p)
    }
  }

  private readonly shedAtDeadline = (entry: Entry): void => {
    this.live--
    this.timeOut(entry, entry.shedAs)
  }

  private timeOut(entry: Entry, code: number): void {
    if (entry.done === undefined) return
    this.timedOutCount++
    this.finish(entry, code)
  }

  private finish(entry: Entry, token: number): void {
    const done = entry.done as (token: number) => void
    entry.done = undefined
    done(token)
  }

  /** The highest class with a live waiter (live > 0). */
  private firstClass(): number {
    for (let p = 0; p < CLASSES; p++) if (this.oldest(p) !== undefined) return p
    return CLASSES - 1
  }

  /** The oldest live waiter of class p (dropping cancelled ones at the head). */
  private oldest(p: number): Entry {
    const list = this.classes[p]
    let head = this.heads[p]
    while (head < list.length && list[head].done === undefined) head++
    this.heads[p] = head
    return list[head]
  }

  /** The newest live waiter of class p (dropping cancelled ones at the tail). */
  private newest(p: number): Entry {
    const list = this.classes[p]
    while (list.length > this.heads[p] && list[list.length - 1].done === undefined) list.pop()
    return list[list.length - 1]
  }

  /** When the oldest live waiter of any class arrived (Infinity when none waits). */
  private oldestAt(): number {
    let at = Infinity
    for (let p = 0; p < CLASSES; p++) {
      const entry = this.oldest(p)
      if (entry !== undefined && entry.at < at) at = entry.at
    }
    return at
  }

  /** Removes an admitted waiter from its end of the list. */
  private take(p: number, fromTail: boolean): void {
    this.live--
    if (fromTail) this.classes[p].pop()
    else this.heads[p]++
    this.compact(p)
  }

  /** Drops the consumed head of a list once it is most of the array, and cancelled waiters when they pile up. */
  private compact(p: number): void {
    const list = this.classes[p]
    const head = this.heads[p]
    if (head === list.length) {
      list.length = 0
      this.heads[p] = 0
    } else if (list.length - head > 2 * this.maxQueue || (head > 64 && head * 2 > list.length)) {
      this.classes[p] = list.slice(head).filter((e) => e.done !== undefined)
      this.heads[p] = 0
    }
  }
}

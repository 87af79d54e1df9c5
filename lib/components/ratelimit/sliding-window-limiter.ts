import type { Event } from '../../foundation/common/event-source'
import { DecideAgain } from '../../foundation/live-rules/decide-again'
import { LiveRules, type RuleStats } from '../../foundation/live-rules/live-rules'
import { MAX_EPOCH } from '../../foundation/regions/rolling-window'
import type { SharedRegion } from '../../foundation/regions/shared-region'
import type { Clock } from '../../foundation/signals/clock'
import { checkNumber, checkOptions, optionalNumber } from '../../foundation/common/validate'
import type { Limiter } from './limiter'
import { invalidPermits, validPermits } from './permits'
import { openLimiterRegion, resolveLimiterSharing } from './sharing'
import { LOCK_TAKEN_OVER, LOCK_TIMED_OUT, type SpinLock } from '../../foundation/regions/spin-lock'
import { registerComponent } from '../../foundation/common/component-registry'
import { placeSlidingWindow } from './sliding-window-layout'
import type { AcquireOptions } from './waiting/acquire-options'
import type { Reservation } from './waiting/reservation'
import { LimiterPermits, resolveMaxQueue } from './waiting/limiter-permits'
import type * as Options from './sliding-window-options'

type SlidingWindowLimiterOptions = Options.SlidingWindowLimiterOptions
export { placeSlidingWindow, type SlidingWindowCells } from './sliding-window-layout'
export type * from './sliding-window-options'

/**
 * At most `limit` permits in any `buckets` consecutive buckets of `window / buckets` ms: the current bucket and the
 * ones before it that are still inside the window. Bucket boundaries are anchored at the limiter's creation. The
 * check and the add are one atomic step (under a spin lock of a few instructions when shared), so concurrent
 * threads and processes never admit more than `limit`; a reject in a bucket already full needs no lock.
 */
export class SlidingWindowLimiter implements Limiter {
  declare readonly window: number
  declare readonly buckets: number
  declare readonly shared: string | undefined
  declare private readonly bucketMs: number
  declare private readonly region: SharedRegion
  declare private readonly f64: Float64Array
  declare private readonly epochIndex: number
  declare private readonly totalIndex: number
  declare private readonly slotIndex: number
  declare private readonly countsIndex: number
  declare private readonly origin: number
  declare private readonly lock: SpinLock | undefined
  declare private readonly now: Clock
  private invalidArguments = 0
  declare private permits: number
  declare private readonly rules: LiveRules
  declare private readonly waiting: LimiterPermits
  private readonly again = new DecideAgain()

  constructor(options: SlidingWindowLimiterOptions) {
    const o = checkOptions<SlidingWindowLimiterOptions>(options, 'options')
    this.permits = checkNumber('limit', o.limit, { above: 0 })
    this.window = checkNumber('window', o.window, { above: 0 })
    this.buckets = optionalNumber('buckets', o.buckets, 10, { min: 1, max: 10_000, integer: true })
    const sharing = resolveLimiterSharing(o)
    this.shared = sharing.shared
    this.now = sharing.now
    this.bucketMs = this.window / this.buckets

    const layout = sharing.layout('sliding-window')
    const cells = placeSlidingWindow(layout, this.permits, this.window, this.buckets, this.now())
    ;({ region: this.region, lock: this.lock } = openLimiterRegion(this.shared, sharing.namespace, layout, cells.lock))
    this.f64 = this.region.f64
    const base = this.region.base
    this.epochIndex = (base + cells.epoch) / 8
    this.totalIndex = (base + cells.total) / 8
    this.slotIndex = (base + cells.slot) / 8
    this.countsIndex = (base + cells.counts) / 8
    this.origin = this.f64[(base + cells.origin) / 8]
    this.rules = new LiveRules(this.region, cells.rules, {
      fields: ['limit'],
      resolve: (rule) => [checkNumber('limit', rule.limit, { above: 0 })],
      apply: (values) => (this.permits = values[0]),
    })
    const wake = this.region.shared ? { i32: this.region.i32, index: (base + cells.wake) / 4 } : undefined
    const mark = () => this.epochAt(this.now())
    this.waiting = new LimiterPermits(this, this.now, resolveMaxQueue(o), () => this.limit, wake, mark)
  }

  /** Permits per window (the live rule's, once changed; reading it applies nothing). */
  get limit(): number {
    return this.rules.pending()?.[0] ?? this.permits
  }

  /** Told each live rule this member starts to obey, at its first call after the change (docs/rules/live-rules.md). */
  get onRuleChange(): Event<RuleStats> {
    return this.rules.onChange
  }

  /**
   * Changes the limit for every member of the host (docs/rules/live-rules.md): validated as the constructor
   * validates it, refused (InvalidOptionError) when bad. Permits already taken in the window stay taken.
   */
  configure(rule: Options.SlidingWindowLimiterRule): RuleStats {
    return this.rules.configure(rule)
  }

  /**
   * Takes `n` permits (default 1) if the window has room for them now. More than `limit` never fits. Never throws:
   * a bad `n` is refused and counted in stats().
   */
  tryAcquire(n = 1): boolean {
    const rules = this.rules
    if (rules.i32[rules.index] !== rules.seen) rules.refresh()
    if (!(typeof n === 'number' && n > 0 && n <= this.permits)) return this.outOfRange(n)
    const e = this.epochAt(this.now())
    const f64 = this.f64
    // Within one bucket the total only grows: if it is already full for this bucket, reject without the lock.
    if (f64[this.epochIndex] === e && f64[this.totalIndex] + n > this.permits) return rules.shadowAdmits(0)
    const lock = this.lock
    if (lock !== undefined) {
      const got = lock.acquire()
      if (got === LOCK_TIMED_OUT) return false
      if (got === LOCK_TAKEN_OVER) this.repair()
      if (rules.i32[rules.index] !== rules.seen) {
        lock.release() // the rule changed since this call began: decide again under it, once
        return this.again.once(this.tryAcquire, this, n)
      }
    }
    this.advance(e)
    const total = f64[this.totalIndex]
    const ok = total + n <= this.permits
    if (ok) {
      // Into the newest bucket, also for a writer whose clock lags: its permit then expires later, never sooner.
      f64[this.countsIndex + f64[this.slotIndex]] += n
      f64[this.totalIndex] = total + n
    }
    const released = lock === undefined || lock.release()
    return ok ? released : released && rules.shadowAdmits(0)
  }

  available(): number {
    this.rules.obey()
    const room = this.permits - this.liveTotal(this.newestAt(this.now()))
    return room > 0 ? room : 0
  }

  retryAfterMs(n = 1): number {
    if (!validPermits(n)) return invalidPermits(n)
    this.rules.obey()
    const limit = this.permits
    if (n > limit) return Infinity
    const now = this.now()
    const e = this.newestAt(now)
    let used = this.liveTotal(e)
    // Oldest live bucket first: find the first whose expiry leaves room for n.
    for (let k = e - this.buckets + 1; used + n > limit && k <= e; k++) {
      used -= this.countAt(k)
      const wait = this.origin + (k + this.buckets) * this.bucketMs - now
      if (used + n <= limit) return wait > 0 ? wait : 0 // also for a clock that read NaN
    }
    return 0
  }

  /** Takes `n` permits (default 1), waiting for room in the window as TokenBucket.acquire waits for tokens. */
  acquire(n = 1, options?: AcquireOptions): Promise<void> {
    return this.waiting.queue().acquire(n, options, false) as Promise<void>
  }

  /** Takes an estimate of `n` permits as acquire does; the Reservation settles the real cost later. */
  reserve(n: number, options?: AcquireOptions): Promise<Reservation> {
    return this.waiting.queue().acquire(n, options, true) as Promise<Reservation>
  }

  /**
   * @internal Takes `delta` more permits into the newest bucket (an overdraw: they leave the window a full window
   * from now), or gives `-delta` back to the bucket of epoch `mark` where they were taken, if it is still live.
   */
  adjust(delta: number, mark: number): void {
    if (!(delta > -Infinity && delta < Infinity) || delta === 0) return
    const lock = this.lock
    if (lock !== undefined) {
      const got = lock.acquire()
      if (got === LOCK_TIMED_OUT) return
      if (got === LOCK_TAKEN_OVER) this.repair()
    }
    const e = this.epochAt(this.now())
    this.advance(e)
    const f64 = this.f64
    if (delta > 0) {
      f64[this.countsIndex + f64[this.slotIndex]] += delta
      f64[this.totalIndex] += delta
    } else if (mark > e - this.buckets && mark <= e) {
      const slot = this.countsIndex + (mark % this.buckets)
      const back = Math.min(-delta, f64[slot])
      f64[slot] -= back
      f64[this.totalIndex] = Math.max(0, f64[this.totalIndex] - back)
    }
    lock?.release()
    if (delta < 0) this.waiting.givenBack()
  }

  /** Locks this member took over from a holder that died or stalled inside its critical section. */
  get lockTakeovers(): number {
    return this.lock === undefined ? 0 : this.lock.takeovers
  }

  stats(): Options.SlidingWindowLimiterStats {
    return {
      limit: this.limit,
      window: this.window,
      buckets: this.buckets,
      available: this.available(),
      lockTakeovers: this.lockTakeovers,
      lockTimeouts: this.lock === undefined ? 0 : this.lock.timeouts,
      invalidArguments: this.invalidArguments,
      rules: this.rules.stats(),
      queue: this.waiting.stats(),
    }
  }

  /** Detaches from shared memory (a local limiter just stops counting) and rejects its waiters. Idempotent. */
  close(): void {
    this.waiting.close()
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** A bad `n` is refused and counted; more than `limit` is a refusal the shadow mode admits. */
  private outOfRange(n: unknown): boolean {
    if (validPermits(n)) return this.rules.shadowAdmits(0)
    this.invalidArguments++
    return false
  }

  private epochAt(now: number): number {
    const e = Math.floor((now - this.origin) / this.bucketMs)
    // Clamped: a clock that returns a huge number or Infinity must not make the loops over epochs endless.
    return e > 0 ? (e < MAX_EPOCH ? e : MAX_EPOCH) : 0
  }

  /** Moves the window to epoch e (under the lock when shared). */
  private advance(e: number): void {
    const epoch = this.storedEpoch()
    // A stored epoch or slot no writer could have left (a corrupted region) restarts the window instead of being
    // followed: no loop over a huge epoch, no count written outside the buckets (docs/guide/trust.md).
    if (epoch < 0 || this.f64[this.slotIndex] !== epoch % this.buckets) this.rotate(e - this.buckets, e)
    else if (e > epoch) this.rotate(epoch, e)
  }

  /** Empties the buckets that epochs (from, to] reuse and moves the newest epoch to `to`. Idempotent if interrupted. */
  private rotate(from: number, to: number): void {
    const f64 = this.f64
    let total = f64[this.totalIndex]
    if (to - from >= this.buckets) {
      for (let i = 0; i < this.buckets; i++) f64[this.countsIndex + i] = 0
      total = 0
    } else {
      for (let k = from + 1; k <= to; k++) {
        const slot = this.countsIndex + (k % this.buckets)
        total -= f64[slot]
        f64[slot] = 0
      }
    }
    f64[this.totalIndex] = total > 0 ? total : 0
    f64[this.slotIndex] = to % this.buckets
    f64[this.epochIndex] = to
  }

  /** After taking over a lock, the total is derived again from the buckets (the holder may have stopped between). */
  private repair(): void {
    let total = 0
    for (let i = 0; i < this.buckets; i++) total += this.f64[this.countsIndex + i]
    this.f64[this.totalIndex] = total
  }

  /** The region's newest epoch: a whole number in [0, MAX_EPOCH], or -1 when the cell holds anything else. */
  private storedEpoch(): number {
    const e = this.f64[this.epochIndex]
    return e >= 0 && e <= MAX_EPOCH && Math.floor(e) === e ? e : -1
  }

  /** Count of epoch k's bucket as the region holds it now (0 if that bucket was never written or reused since). */
  private countAt(k: number): number {
    const newest = this.storedEpoch()
    if (k > newest || k <= newest - this.buckets || k < 0) return 0
    return this.f64[this.countsIndex + (k % this.buckets)]
  }

  /** The newest epoch at `now`: this clock's, or the region's if another writer's clock is ahead. */
  private newestAt(now: number): number {
    const e = this.epochAt(now)
    const newest = this.storedEpoch()
    return e > newest ? e : newest
  }

  /** Sum of the buckets live when epoch e is the newest (read only: the window is not moved). */
  private liveTotal(e: number): number {
    let sum = 0
    for (let k = e - this.buckets + 1; k <= e; k++) sum += this.countAt(k)
    return sum
  }
}
registerComponent('SlidingWindowLimiter', SlidingWindowLimiter)

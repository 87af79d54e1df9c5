import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import type { Event } from '../../foundation/common/event-source'
import { DecideAgain } from '../../foundation/live-rules/decide-again'
import { LiveRules, type RuleStats } from '../../foundation/live-rules/live-rules'
import { placeRules, RATE_SHADOW, type RulePlacement } from '../../foundation/live-rules/rule-block'
import { MAX_EPOCH } from '../../foundation/regions/rolling-window'
import type { RegionLayout } from '../../foundation/regions/region-layout'
import type { SharedRegion } from '../../foundation/regions/shared-region'
import type { Clock } from '../../foundation/signals/clock'
import { checkNumber, checkOptions, optionalNumber } from '../../foundation/common/validate'
import type { Limiter } from './limiter'
import { invalidPermits, validPermits } from './permits'
import { type SharingOptions, openLimiterRegion, resolveLimiterSharing } from './sharing'
import { LOCK_TAKEN_OVER, LOCK_TIMED_OUT, type SpinLock } from '../../foundation/regions/spin-lock'
import { registerComponent } from '../../foundation/common/component-registry'

export interface SlidingWindowLimiterOptions extends SharingOptions {
  /** Permits per window (> 0). */
  limit: number
  /** Window length, ms (> 0). */
  window: number
  /** Buckets the window slides by (default 10): the window moves forward one bucket (window / buckets) at a time. */
  buckets?: number
}

/** The fields of a SlidingWindowLimiter's rule that `configure` changes at run time. */
export type SlidingWindowLimiterRule = Partial<Pick<SlidingWindowLimiterOptions, 'limit'>> & ShadowRule

export interface SlidingWindowLimiterStats {
  limit: number
  window: number
  buckets: number
  /** Permits available now (host-wide when shared). */
  available: number
  /** Locks this member took over from a holder that died or stalled inside its critical section. */
  lockTakeovers: number
  /** Takes denied because the lock stayed held past its wait bound, a few ms (docs/guide/trust.md). */
  lockTimeouts: number
  /** tryAcquire calls with a permit count that is not a finite number > 0 (refused, not thrown). */
  invalidArguments: number
  /** The live rule: its version (0 until `configure` first changed it) and values. */
  rules: RuleStats
}

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
  configure(rule: SlidingWindowLimiterRule): RuleStats {
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
    const epoch = this.storedEpoch()
    // A stored epoch or slot no writer could have left (a corrupted region) restarts the window instead of being
    // followed: no loop over a huge epoch, no count written outside the buckets (docs/guide/trust.md).
    if (epoch < 0 || f64[this.slotIndex] !== epoch % this.buckets) this.rotate(e - this.buckets, e)
    else if (e > epoch) this.rotate(epoch, e)
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

  /** Locks this member took over from a holder that died or stalled inside its critical section. */
  get lockTakeovers(): number {
    return this.lock === undefined ? 0 : this.lock.takeovers
  }

  stats(): SlidingWindowLimiterStats {
    return {
      limit: this.limit,
      window: this.window,
      buckets: this.buckets,
      available: this.available(),
      lockTakeovers: this.lockTakeovers,
      lockTimeouts: this.lock === undefined ? 0 : this.lock.timeouts,
      invalidArguments: this.invalidArguments,
      rules: this.rules.stats(),
    }
  }

  /** Detaches from shared memory (a local limiter just stops counting). Idempotent. */
  close(): void {
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

/** Payload offsets of a sliding window's cells. */
export interface SlidingWindowCells {
  lock: number
  epoch: number
  total: number
  slot: number
  origin: number
  counts: number
  rules: RulePlacement
}

/**
 * A sliding window's cells in `layout` (kind 'sliding-window'): one line for the lock word (Int32 at +0), the
 * newest bucket's epoch (+8), the total of the live buckets (+16) and the newest bucket's slot (+24, so that a
 * decision needs no modulo of a float); then the clock reading at creation and the bucket counts. Watchers such as
 * `bulwark top` lay out a snapshot with it.
 */
export function placeSlidingWindow(
  layout: RegionLayout,
  limit: number,
  window: number,
  buckets: number,
  origin: number,
): SlidingWindowCells {
  layout.describe(`v3 limit=${limit} window=${window} buckets=${buckets}`)
  const lock = layout.cell(0, true)
  return {
    lock,
    epoch: lock + 8,
    total: lock + 16,
    slot: lock + 24,
    origin: layout.cell(origin),
    counts: layout.block(buckets * 8),
    rules: placeRules(layout, [limit], RATE_SHADOW),
  }
}

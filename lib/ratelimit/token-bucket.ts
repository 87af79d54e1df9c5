import type { RegionLayout } from '../shared/region-layout'
import type { SharedRegion } from '../shared/shared-region'
import type { Clock } from '../signals/clock'
import { checkNumber, checkOptions, optionalNumber } from '../validate'
import type { Limiter } from './limiter'
import { invalidPermits, validPermits } from './permits'
import { type SharingOptions, openLimiterRegion, resolveLimiterSharing } from './sharing'
import type { SpinLock } from './spin-lock'

export interface TokenBucketOptions extends SharingOptions {
  /** Tokens added per second (> 0). */
  rate: number
  /** Capacity: the most tokens available at once, after a quiet spell (default: one second's worth, at least 1). */
  burst?: number
}

export interface TokenBucketStats {
  rate: number
  burst: number
  /** Tokens available now (host-wide when shared; may be fractional). */
  available: number
  /** Locks this member took over from a holder that died or stalled inside its critical section. */
  lockTakeovers: number
  /** tryAcquire calls with a permit count that is not a finite number > 0 (refused, not thrown). */
  invalidArguments: number
}

/**
 * A token bucket, kept as GCRA's theoretical arrival time: one number, measured in tokens, that says when the
 * bucket will be full again. Taking n tokens moves it n forward; refill is implied by the clock (no timer). When
 * shared, the read-modify-write happens under a spin lock of a few instructions, so that no token is handed out
 * twice however many threads and processes take at once; a reject needs no lock at all.
 */
export class TokenBucket implements Limiter {
  readonly rate: number
  readonly burst: number
  readonly shared: string | undefined
  private readonly region: SharedRegion
  private readonly f64: Float64Array
  /** f64 index of the arrival time, in tokens since `origin`. */
  private readonly tatIndex: number
  /** The clock reading the region was created at: keeps token counts small, so that they stay exact. */
  private readonly origin: number
  private readonly tokensPerMs: number
  private readonly lock: SpinLock | undefined
  private readonly now: Clock
  private invalidArguments = 0

  constructor(options: TokenBucketOptions) {
    const o = checkOptions<TokenBucketOptions>(options, 'options')
    this.rate = checkNumber('rate', o.rate, { above: 0 })
    this.burst = optionalNumber('burst', o.burst, Math.max(1, this.rate), { above: 0 })
    const sharing = resolveLimiterSharing(o)
    this.shared = sharing.shared
    this.now = sharing.now

    const layout = sharing.layout('token-bucket')
    const cells = placeTokenBucket(layout, this.rate, this.burst, this.now())
    ;({ region: this.region, lock: this.lock } = openLimiterRegion(this.shared, layout, cells.lock))
    this.f64 = this.region.f64
    this.tatIndex = (this.region.base + cells.tat) / 8
    this.origin = this.f64[(this.region.base + cells.origin) / 8]
    this.tokensPerMs = this.rate / 1000
  }

  /**
   * Takes `n` tokens (default 1) if the bucket holds them now. More than `burst` is never available. Never throws:
   * a bad `n` is refused and counted in stats().
   */
  tryAcquire(n = 1): boolean {
    if (!(typeof n === 'number' && n > 0 && n <= this.burst)) return this.outOfRange(n)
    const now = (this.now() - this.origin) * this.tokensPerMs
    const limit = now + this.burst
    const f64 = this.f64
    const at = this.tatIndex
    // The arrival time only grows: if an unlocked read already rejects, the current value rejects too.
    if (f64[at] + n > limit) return false
    const lock = this.lock
    if (lock === undefined) {
      const tat = f64[at]
      f64[at] = (tat > now ? tat : now) + n
      return true
    }
    lock.acquire() // nothing to repair after a takeover: the state is one number, written by one store
    const tat = f64[at]
    const next = (tat > now ? tat : now) + n
    const ok = next <= limit
    if (ok) f64[at] = next
    // Taken over meanwhile (this member stalled for a second inside): deny, the write may have been stale.
    return lock.release() && ok
  }

  available(): number {
    return tokensAvailable(this.f64[this.tatIndex], (this.now() - this.origin) * this.tokensPerMs, this.burst)
  }

  retryAfterMs(n = 1): number {
    if (!validPermits(n)) return invalidPermits(n)
    if (n > this.burst) return Infinity
    const now = (this.now() - this.origin) * this.tokensPerMs
    const wait = (this.f64[this.tatIndex] + n - (now + this.burst)) / this.tokensPerMs
    return wait > 0 ? wait : 0
  }

  /** Locks this member took over from a holder that died or stalled inside its critical section. */
  get lockTakeovers(): number {
    return this.lock === undefined ? 0 : this.lock.takeovers
  }

  stats(): TokenBucketStats {
    return {
      rate: this.rate,
      burst: this.burst,
      available: this.available(),
      lockTakeovers: this.lockTakeovers,
      invalidArguments: this.invalidArguments,
    }
  }

  /** Detaches from shared memory (a local bucket just stops counting). Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  private outOfRange(n: unknown): boolean {
    if (!validPermits(n)) this.invalidArguments++
    return false
  }
}

/**
 * A token bucket's cells in `layout` (kind 'token-bucket'): the lock word (an Int32 at line + 0) and the arrival
 * time (an f64 at line + 8) share one cache line; the clock reading at creation (`origin`) follows. Watchers such
 * as `bulwark top` lay out a snapshot with it.
 */
export function placeTokenBucket(
  layout: RegionLayout,
  rate: number,
  burst: number,
  origin: number,
): { lock: number; tat: number; origin: number } {
  layout.describe(`v1 rate=${rate} burst=${burst}`)
  const lock = layout.cell(0, true)
  return { lock, tat: lock + 8, origin: layout.cell(origin) }
}

/** Tokens available when the arrival time is `tat` and the clock reads `now`, both in tokens since the origin. */
export function tokensAvailable(tat: number, now: number, burst: number): number {
  const debt = tat - now
  if (debt <= 0) return burst
  return debt < burst ? burst - debt : 0
}

import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import type { Event } from '../../foundation/common/event-source'
import { DecideAgain } from '../../foundation/live-rules/decide-again'
import { LiveRules, type RuleStats } from '../../foundation/live-rules/live-rules'
import { lockBusyError, placeRules, RATE_SHADOW, type RulePlacement } from '../../foundation/live-rules/rule-block'
import type { RegionLayout } from '../../foundation/regions/region-layout'
import type { SharedRegion } from '../../foundation/regions/shared-region'
import type { Clock } from '../../foundation/signals/clock'
import { checkNumber, checkOptions, optionalBoolean, optionalNumber } from '../../foundation/common/validate'
import type { Limiter } from './limiter'
import { invalidPermits, validPermits } from './permits'
import { type SharingOptions, openLimiterRegion, resolveLimiterSharing } from './sharing'
import { LOCK_TIMED_OUT, type SpinLock } from '../../foundation/regions/spin-lock'
import { registerComponent } from '../../foundation/common/component-registry'
import type { AcquireOptions } from './waiting/acquire-options'
import type { PermitQueueStats } from './waiting/permit-queue'
import type { Reservation } from './waiting/reservation'
import { LimiterPermits, resolveMaxQueue, type WaitingOptions } from './waiting/limiter-permits'

export interface TokenBucketOptions extends SharingOptions, WaitingOptions {
  /** Tokens added per second (> 0). */
  rate: number
  /** Capacity: the most tokens available at once, after a quiet spell (default: one second's worth, at least 1). */
  burst?: number
  /**
   * Spaces this member's grants evenly, a leaky bucket (default false): n tokens are granted only once the previous
   * grants have drained at `rate`, so no burst goes through; `burst` still bounds one call's n.
   */
  pacing?: boolean
}

/** The fields of a TokenBucket's rule that `configure` changes at run time. */
export type TokenBucketRule = Partial<Pick<TokenBucketOptions, 'rate' | 'burst'>> & ShadowRule

export interface TokenBucketStats {
  rate: number
  burst: number
  /** Tokens available now (host-wide when shared; may be fractional). */
  available: number
  /** Locks this member took over from a holder that died or stalled inside its critical section. */
  lockTakeovers: number
  /** Takes denied because the lock stayed held past its wait bound, a few ms (docs/guide/trust.md). */
  lockTimeouts: number
  /** tryAcquire calls with a permit count that is not a finite number > 0 (refused, not thrown). */
  invalidArguments: number
  /** The live rule: its version (0 until `configure` first changed it) and values. */
  rules: RuleStats
  /** This process's callers waiting in `acquire` or `reserve` (undefined until one waited). */
  queue?: PermitQueueStats
}

export function resolveRate(o: { rate?: unknown; burst?: unknown }): [rate: number, burst: number] {
  const rate = checkNumber('rate', o.rate, { above: 0 })
  return [rate, optionalNumber('burst', o.burst, Math.max(1, rate), { above: 0 })]
}

/**
 * A token bucket, kept as GCRA's theoretical arrival time: one number, measured in tokens, that says when the
 * bucket will be full again. Taking n tokens moves it n forward; refill is implied by the clock (no timer). When
 * shared, the read-modify-write happens under a spin lock of a few instructions, so that no token is handed out
 * twice however many threads and processes take at once; a reject needs no lock at all. `acquire` and `reserve`
 * wait for tokens in a queue with one timer (docs/rules/waiting.md).
 */
export class TokenBucket implements Limiter {
  declare readonly shared: string | undefined
  declare private readonly region: SharedRegion
  declare private readonly f64: Float64Array
  /** f64 index of the arrival time, in tokens since `origin`. */
  declare private readonly tatIndex: number
  /** The clock reading the region was created at: keeps token counts small, so that they stay exact. */
  declare private readonly origin: number
  declare private tokensPerMs: number
  declare private burstTokens: number
  declare private readonly rules: LiveRules
  declare private readonly lock: SpinLock | undefined
  declare private readonly now: Clock
  declare private readonly pacing: boolean
  declare private readonly permits: LimiterPermits
  private invalidArguments = 0
  private readonly again = new DecideAgain()

  constructor(options: TokenBucketOptions) {
    const o = checkOptions<TokenBucketOptions>(options, 'options')
    const [rate, burst] = resolveRate(o)
    const sharing = resolveLimiterSharing(o)
    this.shared = sharing.shared
    this.now = sharing.now

    const layout = sharing.layout('token-bucket')
    const cells = placeTokenBucket(layout, rate, burst, this.now())
    ;({ region: this.region, lock: this.lock } = openLimiterRegion(this.shared, sharing.namespace, layout, cells.lock))
    this.f64 = this.region.f64
    this.tatIndex = (this.region.base + cells.tat) / 8
    this.origin = this.f64[(this.region.base + cells.origin) / 8]
    this.tokensPerMs = rate / 1000
    this.burstTokens = burst
    this.pacing = optionalBoolean('pacing', o.pacing, false)
    const wake = this.region.shared ? { i32: this.region.i32, index: (this.region.base + cells.wake) / 4 } : undefined
    this.permits = new LimiterPermits(this, this.now, resolveMaxQueue(o), () => this.burst, wake)
    this.rules = new LiveRules(this.region, cells.rules, {
      fields: ['rate', 'burst'],
      resolve: (rule) => resolveRate(rule),
      apply: (values) => {
        this.tokensPerMs = values[0] / 1000
        this.burstTokens = values[1]
      },
    })
  }

  /** Told each live rule this member starts to obey, at its first call after the change (docs/rules/live-rules.md). */
  get onRuleChange(): Event<RuleStats> {
    return this.rules.onChange
  }

  /** Tokens added per second (the live rule's, once changed; reading it applies nothing). */
  get rate(): number {
    return this.rules.pending()?.[0] ?? this.tokensPerMs * 1000
  }

  /** The most tokens available at once (the live rule's, once changed; reading it applies nothing). */
  get burst(): number {
    return this.rules.pending()?.[1] ?? this.burstTokens
  }

  /**
   * Changes the rate and burst for every member of the host (docs/rules/live-rules.md): validated as the
   * constructor validates them, refused whole (InvalidOptionError) when a field is bad. The tokens available now
   * stay available (up to the new burst).
   */
  configure(rule: TokenBucketRule): RuleStats {
    const lock = this.lock
    if (lock !== undefined && lock.acquire() === LOCK_TIMED_OUT) throw lockBusyError(this.region.name)
    try {
      return this.rules.configure(rule, ([rate, burst]) => {
        // The arrival time is counted in tokens: count it again at the new rate, for the same tokens available.
        const clock = this.now() - this.origin
        const available = tokensAvailable(this.f64[this.tatIndex], clock * this.tokensPerMs, this.burstTokens)
        this.f64[this.tatIndex] = (clock * rate) / 1000 + burst - Math.min(available, burst)
      })
    } finally {
      lock?.release()
    }
  }

  /**
   * Takes `n` tokens (default 1) if the bucket holds them now. More than `burst` is never available. Never throws:
   * a bad `n` is refused and counted in stats().
   */
  tryAcquire(n = 1): boolean {
    const rules = this.rules
    if (rules.i32[rules.index] !== rules.seen) rules.refresh()
    if (!(typeof n === 'number' && n > 0 && n <= this.burstTokens)) return this.outOfRange(n)
    const now = (this.now() - this.origin) * this.tokensPerMs
    const limit = now + (this.pacing ? n : this.burstTokens)
    const f64 = this.f64
    const at = this.tatIndex
    // The arrival time only grows: if an unlocked read already rejects, the current value rejects too.
    if (f64[at] + n > limit) return rules.shadowAdmits(0)
    const lock = this.lock
    if (lock === undefined) {
      const tat = f64[at]
      f64[at] = (tat > now ? tat : now) + n
      return true
    }
    // Nothing to repair after a takeover: the state is one number, written by one store.
    if (lock.acquire() === LOCK_TIMED_OUT) return false
    if (rules.i32[rules.index] !== rules.seen) {
      lock.release() // the rule changed since this call began: decide again under it, once
      return this.again.once(this.tryAcquire, this, n)
    }
    const tat = f64[at]
    const next = (tat > now ? tat : now) + n
    const ok = next <= limit
    if (ok) f64[at] = next
    // Taken over meanwhile (this member stalled for a second inside): deny, the write may have been stale.
    const released = lock.release()
    return ok ? released : released && rules.shadowAdmits(0)
  }

  available(): number {
    this.rules.obey()
    return tokensAvailable(this.f64[this.tatIndex], (this.now() - this.origin) * this.tokensPerMs, this.burstTokens)
  }

  retryAfterMs(n = 1): number {
    if (!validPermits(n)) return invalidPermits(n)
    this.rules.obey()
    if (n > this.burstTokens) return Infinity
    const now = (this.now() - this.origin) * this.tokensPerMs
    const wait = (this.f64[this.tatIndex] + n - (now + (this.pacing ? n : this.burstTokens))) / this.tokensPerMs
    return wait > 0 ? wait : 0
  }

  /**
   * Takes `n` tokens (default 1), waiting for them when the bucket lacks them: see AcquireOptions for `maxWait`,
   * `priority` and `signal` (docs/guide/ratelimit.md, "Waiting"). Rejects with OverloadError at maxWait, or at once
   * when the wait is known to be longer; with AbortedError on abort; with InvalidArgumentError for n > burst.
   */
  acquire(n = 1, options?: AcquireOptions): Promise<void> {
    return this.permits.queue().acquire(n, options, false) as Promise<void>
  }

  /**
   * Takes an estimate of `n` tokens as acquire does and resolves with a Reservation: `settle(actual)` gives back
   * or takes the difference once the real cost is known, `cancel()` gives it all back.
   */
  reserve(n: number, options?: AcquireOptions): Promise<Reservation> {
    return this.permits.queue().acquire(n, options, true) as Promise<Reservation>
  }

  /**
   * @internal Moves the arrival time by `delta` tokens, from now when it lies in the past: > 0 takes more (an
   * overdraw that later callers wait out), < 0 gives back. A lock that cannot be taken loses the adjustment.
   */
  adjust(delta: number): void {
    if (!(delta > -Infinity && delta < Infinity) || delta === 0) return
    const lock = this.lock
    if (lock !== undefined && lock.acquire() === LOCK_TIMED_OUT) return
    const f64 = this.f64
    const now = (this.now() - this.origin) * this.tokensPerMs
    const tat = f64[this.tatIndex]
    f64[this.tatIndex] = (tat > now ? tat : now) + delta
    lock?.release()
    if (delta < 0) this.permits.givenBack()
  }

  /** @internal The host's give-back count (undefined when not shared): waiters elsewhere poll it. */
  givebacks(): number | undefined {
    return this.permits.givebacks()
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
      lockTimeouts: this.lock === undefined ? 0 : this.lock.timeouts,
      invalidArguments: this.invalidArguments,
      rules: this.rules.stats(),
      queue: this.permits.stats(),
    }
  }

  /** Detaches from shared memory (a local bucket just stops counting) and rejects its waiters. Idempotent. */
  close(): void {
    this.permits.close()
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** A bad `n` is refused and counted; more than `burst` is a refusal the shadow mode admits. */
  private outOfRange(n: unknown): boolean {
    if (validPermits(n)) return this.rules.shadowAdmits(0)
    this.invalidArguments++
    return false
  }
}
registerComponent('TokenBucket', TokenBucket)

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
): { lock: number; tat: number; wake: number; origin: number; rules: RulePlacement } {
  layout.describe(`v3 rate=${rate} burst=${burst}`)
  const lock = layout.cell(0, true)
  // The give-back sequence (an Int32 at line + 16) is a free part of the lock's line.
  const rules = placeRules(layout, [rate, burst], RATE_SHADOW)
  return { lock, tat: lock + 8, wake: lock + 16, origin: layout.cell(origin), rules }
}

/** Tokens available when the arrival time is `tat` and the clock reads `now`, both in tokens since the origin. */
export function tokensAvailable(tat: number, now: number, burst: number): number {
  const debt = tat - now
  if (debt <= 0) return burst
  return debt < burst ? burst - debt : 0
}

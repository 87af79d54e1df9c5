import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { type KeyedFactory, KeyedPool, type KeyedPoolStats } from '../../foundation/keyed/keyed-pool'
import type { KeyedOptions } from '../../foundation/keyed/keyed-options'
import { checkFunction, checkOptions } from '../../foundation/common/validate'
import { boundedKey } from '../../foundation/common/bounded-key'
import type { Limiter } from './limiter'
import { validPermits } from './permits'
import { registerComponent } from '../../foundation/common/component-registry'
import type { AcquireOptions } from './waiting/acquire-options'
import { waitOnKey, type WaitingLimiter } from './waiting/keyed-waiting'
import type { Reservation } from './waiting/reservation'

/**
 * Options of a KeyedLimiter. `maxKeys` defaults to 10 000; `idleTimeout` (default 60 000 ms) only drops a key whose
 * limiter is back at rest, so it need not be longer than the limiter takes to refill. With `shared`, the factory's
 * second argument is each key's shared name: pass it to the limiter's `shared` option.
 */
export type KeyedLimiterOptions = KeyedOptions

/** Counters of a KeyedLimiter: its pool's, and the calls refused for a bad argument. */
export interface KeyedLimiterStats extends KeyedPoolStats {
  /** tryAcquire calls with a key that is not a string (refused, not thrown). */
  invalidArguments: number
}

/**
 * One limiter per key (client, route, tenant...), made on first use by `factory`, in a KeyedPool: bounded by
 * `maxKeys`, no timer per key. A key's limiter is at rest when it is full again (a fresh one would do the same), and
 * only limiters at rest are ever dropped, so that a client cycling through other keys never gives his own exhausted
 * key a fresh limit. When every key the pool looks at is still refilling, a new key is refused: `tryAcquire`
 * answers false and `retryAfterMs(key)` says when an entry comes to rest (size `maxKeys` for your churn of keys:
 * new keys per second x the time a limiter takes to refill).
 */
export class KeyedLimiter<L extends Limiter = Limiter> {
  private readonly pool: KeyedPool<L>
  /** Each limiter's permits when it was made: it is at rest when it has them again. */
  private readonly full = new WeakMap<L, number>()
  private invalidArguments = 0

  constructor(factory: KeyedFactory<L>, options?: KeyedLimiterOptions) {
    checkFunction('factory', factory)
    const make: KeyedFactory<L> = (key, shared) => {
      const limiter = factory(key, shared)
      if (limiter !== null && typeof limiter === 'object') this.full.set(limiter, limiter.available())
      return limiter
    }
    const o = checkOptions<KeyedLimiterOptions>(options, 'options')
    this.pool = new KeyedPool<L>(make, { ...o, timeToRest: (limiter) => this.timeToRest(limiter) }, 10_000)
  }

  get maxKeys(): number {
    return this.pool.maxKeys
  }

  get idleTimeout(): number {
    return this.pool.idleTimeout
  }

  get shared(): string | undefined {
    return this.pool.shared
  }

  /** The limiter of `key`, made by the factory if the key is new; undefined when the pool has no room for it. */
  get(key: string): L | undefined {
    return this.pool.get(boundedKey(key))
  }

  /**
   * `get(key).tryAcquire(n)`; false when the pool has no room for a new key (the key is treated as limited). Never
   * throws: a key that is not a string is refused and counted in stats().
   */
  tryAcquire(key: string, n = 1): boolean {
    if (typeof key !== 'string') {
      this.invalidArguments++
      return false
    }
    const limiter = this.pool.get(boundedKey(key))
    return limiter !== undefined && limiter.tryAcquire(n)
  }

  /**
   * Takes `n` permits of `key`, waiting for them in the key's own queue (its limiter's `acquire`: TokenBucket and
   * SlidingWindowLimiter wait, docs/guide/ratelimit.md "Waiting"). Rejects with OverloadError when the pool has no
   * room for a new key (every key it holds still refilling) or at maxWait.
   */
  acquire(key: string, n = 1, options?: AcquireOptions): Promise<void> {
    return waitOnKey(this.pool, this.typedKey(key), (limiter: WaitingLimiter) => limiter.acquire(n, options))
  }

  /** Reserves an estimate of `n` permits of `key` as acquire waits for them; settle the Reservation later. */
  reserve(key: string, n: number, options?: AcquireOptions): Promise<Reservation> {
    return waitOnKey(this.pool, this.typedKey(key), (limiter: WaitingLimiter) => limiter.reserve(n, options))
  }

  /**
   * Milliseconds until `key` could take `n` permits if nobody else takes any: its limiter's answer, or for a key the
   * pool had no room for, until an entry comes to rest (Infinity if never).
   */
  retryAfterMs(key: string, n = 1): number {
    if (typeof key !== 'string') throw new InvalidArgumentError('key', key, 'a string')
    const limiter = this.pool.peek(boundedKey(key))
    if (limiter !== undefined) return limiter.retryAfterMs(n)
    if (!validPermits(n)) throw new InvalidArgumentError('n', n, 'a finite number > 0')
    return this.pool.retryAfterMs()
  }

  /** Whether `key` has a limiter: true exactly when get(key) returns the one it has. Does not count as a use. */
  has(key: string): boolean {
    return this.pool.has(boundedKey(key))
  }

  delete(key: string): boolean {
    return this.pool.delete(boundedKey(key))
  }

  /** Drops every idle key at rest now; returns how many. Not needed for bounded memory, which holds without it. */
  prune(): number {
    return this.pool.prune()
  }

  get size(): number {
    return this.pool.size
  }

  stats(): KeyedLimiterStats {
    return { ...this.pool.stats(), invalidArguments: this.invalidArguments }
  }

  /** Drops every key and closes its limiter (a later call starts afresh). Idempotent. */
  close(): void {
    this.pool.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  private typedKey(key: unknown): string | InvalidArgumentError {
    return typeof key === 'string' ? boundedKey(key) : new InvalidArgumentError('key', key, 'a string')
  }

  /** 0 once the limiter has as many permits as when it was made, else the ms until it has them. */
  private timeToRest(limiter: L): number {
    const full = this.full.get(limiter) ?? 0
    return limiter.available() >= full ? 0 : limiter.retryAfterMs(full)
  }
}
registerComponent('KeyedLimiter', KeyedLimiter)

import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import type { Event } from '../../foundation/common/event-source'
import type { HeavyKey } from '../../foundation/keyed-table/heavy-keys'
import { type KeyedFactory, KeyedPool, type KeyedPoolStats } from '../../foundation/keyed/keyed-pool'
import type { KeyedOptions } from '../../foundation/keyed/keyed-options'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import { checkOptions } from '../../foundation/common/validate'
import { boundedKey } from '../../foundation/common/bounded-key'
import {
  type KeyedLimiterRule,
  type KeyedLimiterTableOptions,
  KeyedRateLimits,
  type KeyedTableStats,
} from './keyed-rate-limits'
import type { Limiter } from './limiter'
import { invalidPermits, validPermits } from './permits'
import { registerComponent } from '../../foundation/common/component-registry'
import type { AcquireOptions } from './waiting/acquire-options'
import { waitOnKey, type WaitingLimiter } from './waiting/keyed-waiting'
import type { Reservation } from './waiting/reservation'
import { resolveMaxQueue } from './waiting/limiter-permits'
import type { PermitQueueStats } from './waiting/permit-queue'
import { TableWaiting } from './waiting/table-waiting'

export type { HeavyKey, KeyedLimiterRule, KeyedLimiterTableOptions, KeyedTableStats }

/**
 * Options of a KeyedLimiter. `maxKeys` defaults to 10 000; `idleTimeout` (default 60 000 ms) only drops a key whose
 * limiter is back at rest, so it need not be longer than the limiter takes to refill. With `shared`, the factory's
 * second argument is each key's shared name: pass it to the limiter's `shared` option.
 */
export type KeyedLimiterOptions = KeyedOptions

/**
 * Counters of a KeyedLimiter: its pool's (the table form: `size` keys holding a slot, `created` slots claimed
 * empty, `evicted` slots reused from keys at rest), the calls refused for a bad argument, and the table's own.
 */
export interface KeyedLimiterStats extends KeyedPoolStats {
  /** tryAcquire calls with a key that is not a string, or a permit count that is not a finite number > 0. */
  invalidArguments: number
  /** The table form's counters and rule (undefined in the factory form). */
  table?: KeyedTableStats
  /** The table form: this process's callers waiting in `acquire`, every key together. */
  queue?: PermitQueueStats
}

const noTable = (): never => {
  throw new InvalidArgumentError(
    'this',
    'a KeyedLimiter of the factory form',
    'the table form: new KeyedLimiter({ rate })',
  )
}

/**
 * A rate limit per key (client, route, tenant...), in one of two forms.
 *
 * The table form, `new KeyedLimiter({ rate, burst, maxKeys, shared })`, keeps one token bucket per key in a keyed
 * table (docs/rules/keyed-table.md): every key in one block of fixed slots (a buffer, or one region for the host
 * when `shared`), 32 bytes a key made at construction, no object per key, a decision in JavaScript with one
 * compare-and-swap. A new key takes an empty slot or that of a key at rest (its bucket full again); when every slot
 * of its buckets is still refilling it takes from the overflow limit the keys without a slot share. No key ever
 * gets a fresh budget early, and no new key is refused outright.
 *
 * The factory form keeps one limiter per key, made on first use by `factory`, in a KeyedPool: bounded by
 * `maxKeys`, no timer per key. A key's limiter is at rest when it is full again (a fresh one would do the same), and
 * only limiters at rest are ever dropped, so that a client cycling through other keys never gives his own exhausted
 * key a fresh limit. When every key the pool looks at is still refilling, a new key is refused: `tryAcquire`
 * answers false and `retryAfterMs(key)` says when an entry comes to rest (size `maxKeys` for your churn of keys:
 * new keys per second x the time a limiter takes to refill).
 */
export class KeyedLimiter<L extends Limiter = Limiter> {
  /** The table form's decisions (undefined in the factory form). */
  declare private readonly limits: KeyedRateLimits | undefined
  declare private readonly pool: KeyedPool<L>
  /** The table form's waiters (made on the first acquire). */
  declare private waiting: TableWaiting | undefined
  declare private readonly maxQueue: number
  /** Each limiter's permits when it was made: it is at rest when it has them again. */
  private readonly full = new WeakMap<L, number>()
  private invalidArguments = 0

  constructor(options: KeyedLimiterTableOptions)
  constructor(factory: KeyedFactory<L>, options?: KeyedLimiterOptions)
  constructor(factory: KeyedFactory<L> | KeyedLimiterTableOptions, options?: KeyedLimiterOptions) {
    if (typeof factory !== 'function') {
      if (factory === null || typeof factory !== 'object' || Array.isArray(factory)) {
        const expected = 'a function (the factory form) or an options object with `rate` (the table form)'
        throw new InvalidOptionError('factory', factory, expected)
      }
      if (options !== undefined) throw new InvalidOptionError('options', options, 'left out in the table form')
      this.maxQueue = resolveMaxQueue(factory)
      this.limits = new KeyedRateLimits(factory)
      this.pool = undefined as never
      this.waiting = undefined
      return
    }
    this.limits = undefined
    const make: KeyedFactory<L> = (key, shared) => {
      const limiter = factory(key, shared)
      if (limiter !== null && typeof limiter === 'object') this.full.set(limiter, limiter.available())
      return limiter
    }
    const o = checkOptions<KeyedLimiterOptions>(options, 'options')
    this.pool = new KeyedPool<L>(make, { ...o, timeToRest: (limiter) => this.timeToRest(limiter) }, 10_000)
  }

  get maxKeys(): number {
    return this.limits !== undefined ? this.limits.maxKeys : this.pool.maxKeys
  }

  /** The factory form's idle timeout (ms); Infinity in the table form, which reuses slots instead. */
  get idleTimeout(): number {
    return this.limits !== undefined ? Infinity : this.pool.idleTimeout
  }

  get shared(): string | undefined {
    return this.limits !== undefined ? this.limits.shared : this.pool.shared
  }

  /** The table form's tokens per second per key (the live rule's, once changed). */
  get rate(): number {
    return (this.limits ?? noTable()).rate
  }

  /** The table form's capacity per key (the live rule's, once changed). */
  get burst(): number {
    return (this.limits ?? noTable()).burst
  }

  /** The table form: told each live rule this member starts to obey, at its first call after the change. */
  get onRuleChange(): Event<RuleStats> {
    return (this.limits ?? noTable()).onRuleChange
  }

  /**
   * The table form: changes `rate` and `burst` for every member of the host (docs/rules/live-rules.md), validated
   * as the constructor validates them (InvalidOptionError, nothing changed, when a field is bad). Each key's debt
   * stays as the time it takes to repay it.
   */
  configure(rule: KeyedLimiterRule): RuleStats {
    return (this.limits ?? noTable()).configure(rule)
  }

  /**
   * The limiter of `key`, made by the factory if the key is new; undefined when the pool has no room for it (and
   * always in the table form, which keeps no limiter object per key).
   */
  get(key: string): L | undefined {
    if (this.limits !== undefined) return undefined
    return this.pool.get(boundedKey(key))
  }

  /**
   * `get(key).tryAcquire(n)`; false when the pool has no room for a new key (the key is treated as limited). Never
   * throws: a key that is not a string is refused and counted in stats().
   */
  tryAcquire(key: string, n = 1): boolean {
    const limits = this.limits
    if (limits !== undefined) return limits.tryAcquire(key, n)
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
   * room for a new key (every key it holds still refilling) or at maxWait. The table form waits in a queue per
   * waiting key, `maxQueue` (default 10 000) bounding the waiters of every key together.
   */
  acquire(key: string, n = 1, options?: AcquireOptions): Promise<void> {
    const limits = this.limits
    if (limits !== undefined) {
      const k = this.typedKey(key)
      if (typeof k !== 'string') return Promise.reject(k)
      this.waiting ??= new TableWaiting(limits, limits.now, this.maxQueue)
      return this.waiting.acquire(k, n, options)
    }
    return waitOnKey(this.pool, this.typedKey(key), (limiter: WaitingLimiter) => limiter.acquire(n, options))
  }

  /**
   * Reserves an estimate of `n` permits of `key` as acquire waits for them; settle the Reservation later. The
   * factory form only: the table cannot give a key's permits back yet (InvalidArgumentError).
   */
  reserve(key: string, n: number, options?: AcquireOptions): Promise<Reservation> {
    if (this.limits !== undefined) {
      const why = 'the factory form: a keyed table cannot give permits back to a key, which settle needs'
      return Promise.reject(new InvalidArgumentError('this', 'a KeyedLimiter of the table form', why))
    }
    return waitOnKey(this.pool, this.typedKey(key), (limiter: WaitingLimiter) => limiter.reserve(n, options))
  }

  /**
   * Milliseconds until `key` could take `n` permits if nobody else takes any: its limiter's answer, or for a key the
   * pool had no room for, until an entry comes to rest (Infinity if never).
   */
  retryAfterMs(key: string, n = 1): number {
    if (typeof key !== 'string') throw new InvalidArgumentError('key', key, 'a string')
    if (this.limits !== undefined) return validPermits(n) ? this.limits.retryAfterMs(key, n) : invalidPermits(n)
    const limiter = this.pool.peek(boundedKey(key))
    if (limiter !== undefined) return limiter.retryAfterMs(n)
    if (!validPermits(n)) throw new InvalidArgumentError('n', n, 'a finite number > 0')
    return this.pool.retryAfterMs()
  }

  /**
   * Permits `key` has now (the table form; a key without a slot: a full burst, or what the overflow has when its
   * buckets are full). The factory form: its limiter's, or 0 for a key it does not hold.
   */
  available(key: string): number {
    if (typeof key !== 'string') throw new InvalidArgumentError('key', key, 'a string')
    if (this.limits !== undefined) return this.limits.available(key)
    return this.pool.peek(boundedKey(key))?.available() ?? 0
  }

  /**
   * Whether `key` has a limiter (the table form: a slot): true exactly when get(key) returns the one it has. Does
   * not count as a use.
   */
  has(key: string): boolean {
    if (this.limits !== undefined) return this.limits.table.holds(key)
    return this.pool.has(boundedKey(key))
  }

  /** Drops `key` and closes its limiter. The table form keeps keys until their slot is reused: false. */
  delete(key: string): boolean {
    if (this.limits !== undefined) return false
    return this.pool.delete(boundedKey(key))
  }

  /**
   * Drops every idle key at rest now; returns how many. Not needed for bounded memory, which holds without it.
   * The table form has nothing to drop (its memory is made at construction): 0.
   */
  prune(): number {
    return this.limits !== undefined ? 0 : this.pool.prune()
  }

  /** The table form: the keys refused most lately, with their refusals (keys come from requests: escape them). */
  heaviestKeys(limit?: number): HeavyKey[] {
    return (this.limits ?? noTable()).heaviest(limit)
  }

  get size(): number {
    return this.limits !== undefined ? this.limits.table.size : this.pool.size
  }

  /** @internal The table form's table (metrics read this member's own counters from it), else undefined. */
  get table(): KeyedRateLimits['table'] | undefined {
    return this.limits?.table
  }

  stats(): KeyedLimiterStats {
    const limits = this.limits
    if (limits === undefined) return { ...this.pool.stats(), invalidArguments: this.invalidArguments }
    const s = limits.stats()
    const created = limits.table.total('created')
    const base = { size: s.size, maxKeys: limits.maxKeys, created, evicted: s.table.reused, expired: 0, refused: 0 }
    return { ...base, invalidArguments: s.invalidArguments, table: s.table, queue: this.waiting?.stats() }
  }

  /** The factory form drops every key and closes its limiter (a later call starts afresh); the table form detaches. */
  close(): void {
    if (this.limits !== undefined) {
      this.waiting?.close()
      this.limits.close()
    } else this.pool.close()
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

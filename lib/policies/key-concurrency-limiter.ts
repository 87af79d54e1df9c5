import { INVALID, TokenTable } from '../bbr/token-table'
import { OverloadError } from '../errors/overload-error'
import { type GuardedFunction, type ExecuteOptions, runGuarded, startError } from '../execution/run-guarded'
import { TokenOutcomes } from '../execution/token-outcomes'
import { KeyedPool, type KeyedPoolStats } from '../pool/keyed-pool'
import { boundedKey } from '../ratelimit/bounded-key'
import { type SharingOptions, resolveSharing } from '../shared/sharing-options'
import { Shed } from '../shed/shed'
import { checkNumber, checkOptions, optionalNumber } from '../validate'
import { KeyGauge } from './key-gauge'

export interface KeyConcurrencyLimiterOptions extends SharingOptions {
  /** Requests in flight a key may have at once (an integer >= 1), host-wide when shared. */
  max: number
  /**
   * Keys held at once (default 10 000; shared, 1000: each key held is a region of about 8.5 KiB at 64 members).
   * A key with nothing in flight here may be evicted at no loss (a fresh entry counts the same), so size it for the
   * most keys busy at once, not for every key ever seen.
   */
  maxKeys?: number
  /** A key with nothing in flight and unused for this long (ms) is dropped when room is needed (default 60 000). */
  idleTimeout?: number
}

/** What `execute` takes: the caller's signal and the request's key. */
export interface KeyExecuteOptions extends ExecuteOptions {
  /** The key whose concurrency the call counts against. */
  key: string
}

/** Counters of a KeyConcurrencyLimiter: its pool's, and its own (this member's). */
export interface KeyConcurrencyLimiterStats extends KeyedPoolStats {
  max: number
  /** Requests this member admitted and has not released yet (all keys). */
  inFlight: number
  admitted: number
  /** Refused: the key had `max` in flight, or the pool had no room for a new key (`refused` counts those too). */
  shed: number
  /** Keys whose shared region could not be opened (refused, see docs/rules/key-concurrency.md). */
  regionErrors: number
  /** tryAcquire calls with a key that is not a string (refused, not thrown). */
  invalidArguments: number
  /** release calls with a token that is not outstanding (ignored). */
  invalidReleases: number
}

/**
 * At most `max` requests in flight per key (a tenant, an API key, a client), host-wide when `shared`: Stripe's
 * concurrent-requests limiter, Sentinel's thread-count rule (docs/rules/key-concurrency.md). `tryAcquire(key)`
 * answers a token (>= 0) to give back with `release(token)` exactly once, or `Shed.keyConcurrency`. Keys live in a
 * KeyedPool of `maxKeys`: a key with nothing in flight may be evicted, a busy one never is; when the pool is full
 * of busy keys, a new key is refused (never an exception, never a wait). Neither call allocates once a key is known.
 */
export class KeyConcurrencyLimiter {
  readonly max: number
  readonly shared: string | undefined
  private readonly pool: KeyedPool<KeyGauge>
  private readonly tokens = new TokenTable(64)
  /** The gauge each outstanding token holds a slot of, by token slot. */
  private readonly holders: (KeyGauge | undefined)[] = []
  private readonly outcomes = new TokenOutcomes(this.tokens, (_ok, token) => this.release(token))
  private readonly counts = { admitted: 0, shed: 0, regionErrors: 0, invalidArguments: 0, invalidReleases: 0 }

  constructor(options: KeyConcurrencyLimiterOptions) {
    const o = checkOptions<KeyConcurrencyLimiterOptions>(options, 'options')
    this.max = checkNumber('max', o.max, { integer: true, min: 1, max: 2 ** 30 })
    const sharing = resolveSharing(o)
    this.shared = sharing.shared
    const { namespace, lanes } = sharing
    const maxKeys = optionalNumber('maxKeys', o.maxKeys, sharing.shared === undefined ? 10_000 : 1000, {
      integer: true,
      min: 1,
      max: 1e7,
    })
    this.pool = new KeyedPool<KeyGauge>(
      (_key, shared) => new KeyGauge(shared, namespace, lanes),
      {
        maxKeys,
        idleTimeout: o.idleTimeout,
        shared: sharing.shared,
        now: sharing.now,
        timeToRest: (gauge) => (gauge.local === 0 ? 0 : Infinity),
      },
      10_000,
    )
  }

  get maxKeys(): number {
    return this.pool.maxKeys
  }

  /** A token (>= 0) if `key` has fewer than `max` requests in flight, else Shed.keyConcurrency. Never throws. */
  tryAcquire(key: string): number {
    if (typeof key !== 'string') {
      this.counts.invalidArguments++
      return this.refuse()
    }
    const gauge = this.gaugeOf(boundedKey(key))
    if (gauge === undefined || !gauge.take(this.max)) return this.refuse()
    const token = this.tokens.acquire(0)
    if (token < 0) {
      gauge.give()
      return this.refuse()
    }
    this.holders[this.tokens.slotOf(token)] = gauge
    this.counts.admitted++
    return token
  }

  /** Gives back an admitted request's slot. A token released twice, or never handed out, is counted and ignored. */
  release(token: number): void {
    const slot = this.tokens.slotOf(token)
    if (this.tokens.release(token) === INVALID) {
      this.counts.invalidReleases++
      return
    }
    const gauge = this.holders[slot] as KeyGauge
    this.holders[slot] = undefined
    gauge.give()
  }

  /** Runs `fn` holding one of `options.key`'s slots; rejects with OverloadError('key-concurrency') when it has none. */
  execute<T>(fn: GuardedFunction<T>, options: KeyExecuteOptions): Promise<T> {
    const error = startError(fn, options)
    if (error !== undefined) return Promise.reject(error)
    const token = this.tryAcquire(options?.key)
    if (token < 0) return Promise.reject(new OverloadError('key-concurrency', 1))
    return runGuarded(fn, options.signal, this.outcomes.of(token))
  }

  /** The key's requests in flight (host-wide when shared); 0 for a key the pool does not hold. */
  inFlight(key: string): number {
    return this.pool.peek(boundedKey(key))?.total() ?? 0
  }

  get size(): number {
    return this.pool.size
  }

  stats(): KeyConcurrencyLimiterStats {
    return { ...this.pool.stats(), max: this.max, inFlight: this.tokens.outstanding, ...this.counts }
  }

  /** Drops every key; what this member still held is given back with its lanes. Idempotent. */
  close(): void {
    this.pool.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  private gaugeOf(key: string): KeyGauge | undefined {
    try {
      return this.pool.get(key)
    } catch {
      // A key's region could not be opened (the host's shared memory is full, its members all taken): the key is
      // treated as limited rather than throwing on the hot path.
      this.counts.regionErrors++
      return undefined
    }
  }

  private refuse(): number {
    this.counts.shed++
    return Shed.keyConcurrency
  }
}

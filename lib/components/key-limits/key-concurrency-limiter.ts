import { INVALID, TokenTable } from '../../admission/token-table'
import { OverloadError } from '../../foundation/errors/overload-error'
import type { Event } from '../../foundation/common/event-source'
import { type GuardedFunction, type ExecuteOptions, runGuarded, startError } from '../../admission/run-guarded'
import { TokenOutcomes } from '../../admission/token-outcomes'
import { KeyedPool, type KeyedPoolStats } from '../../foundation/keyed/keyed-pool'
import { boundedKey } from '../../foundation/common/bounded-key'
import type { LiveRules, RuleStats } from '../../foundation/live-rules/live-rules'
import { type SharingOptions, resolveSharing } from '../../foundation/regions/sharing-options'
import type { SharedRegion } from '../../foundation/regions/shared-region'
import { Shed } from '../../foundation/errors/shed'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { KeyGauge } from './key-gauge'
import { openKeyLimitRegion, resolveMax } from './key-limit-region'
import { registerComponent } from '../../foundation/common/component-registry'

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

/** The fields of a KeyConcurrencyLimiter's rule that `configure` changes at run time. */
export type KeyConcurrencyLimiterRule = Partial<Pick<KeyConcurrencyLimiterOptions, 'max'>>

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
  /** The live rule: its version (0 until `configure` first changed it) and values (`max`). */
  rules: RuleStats
}

/**
 * At most `max` requests in flight per key (a tenant, an API key, a client), host-wide when `shared`: Stripe's
 * concurrent-requests limiter, Sentinel's thread-count rule (docs/rules/key-concurrency.md). `tryAcquire(key)`
 * answers a token (>= 0) to give back with `release(token)` exactly once, or `Shed.keyConcurrency`. Keys live in a
 * KeyedPool of `maxKeys`: a key with nothing in flight may be evicted, a busy one never is; when the pool is full
 * of busy keys, a new key is refused (never an exception, never a wait). Neither call allocates once a key is known.
 * `max` is a live rule: `configure({ max })` (or `bulwark set`) changes it for every member of the host.
 */
export class KeyConcurrencyLimiter {
  readonly shared: string | undefined
  private limit: number
  private readonly region: SharedRegion
  private readonly rules: LiveRules
  private readonly pool: KeyedPool<KeyGauge>
  private readonly tokens = new TokenTable(64)
  /** The gauge each outstanding token holds a slot of, by token slot. */
  private readonly holders: (KeyGauge | undefined)[] = []
  private readonly outcomes = new TokenOutcomes(this.tokens, (_ok, token) => this.release(token))
  private readonly counts = { admitted: 0, shed: 0, regionErrors: 0, invalidArguments: 0, invalidReleases: 0 }

  constructor(options: KeyConcurrencyLimiterOptions) {
    const o = checkOptions<KeyConcurrencyLimiterOptions>(options, 'options')
    this.limit = resolveMax(o.max)
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
    // Last: a bad option above leaves no region behind.
    ;({ region: this.region, rules: this.rules } = openKeyLimitRegion(sharing, this.limit, (max) => (this.limit = max)))
  }

  /** Requests in flight a key may have at once (the live rule's, once changed; reading it applies nothing). */
  get max(): number {
    return this.rules.pending()?.[0] ?? this.limit
  }

  /** Told each live rule this member starts to obey, at its first call after the change (docs/rules/live-rules.md). */
  get onRuleChange(): Event<RuleStats> {
    return this.rules.onChange
  }

  /**
   * Changes `max` for every member of the host (docs/rules/live-rules.md): validated as the constructor validates
   * it, refused (InvalidOptionError) when bad. Requests in flight stay; a key over a lowered `max` admits again
   * once enough of them are released.
   */
  configure(rule: KeyConcurrencyLimiterRule): RuleStats {
    return this.rules.configure(rule)
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
    const rules = this.rules
    if (rules.i32[rules.index] !== rules.seen) rules.refresh()
    const gauge = this.gaugeOf(boundedKey(key))
    if (gauge === undefined || !gauge.take(this.limit)) return this.refuse()
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

  /** Calls `fn` with each key the limiter holds and its requests in flight (host-wide when shared). */
  forEachKey(fn: (key: string, inFlight: number) => void): void {
    this.pool.forEach((gauge, key) => fn(key, gauge.total()))
  }

  get size(): number {
    return this.pool.size
  }

  stats(): KeyConcurrencyLimiterStats {
    const rules = this.rules.stats()
    return { ...this.pool.stats(), max: this.max, inFlight: this.tokens.outstanding, ...this.counts, rules }
  }

  /** Drops every key; what this member still held is given back with its lanes. Idempotent. */
  close(): void {
    this.pool.close()
    this.region.close()
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
registerComponent('KeyConcurrencyLimiter', KeyConcurrencyLimiter)

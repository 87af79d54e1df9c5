import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import { INVALID, TokenTable } from '../../admission/token-table'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { OverloadError } from '../../foundation/errors/overload-error'
import type { Event } from '../../foundation/common/event-source'
import { type GuardedFunction, type ExecuteOptions, runGuarded, startError } from '../../admission/run-guarded'
import { TokenOutcomes } from '../../admission/token-outcomes'
import type { CountTable } from '../../foundation/keyed-table/count-table'
import { type HolderJournal, JOURNAL_ENTRIES } from '../../foundation/keyed-table/holder-journal'
import type { FingerprintFunction } from '../../foundation/keyed-table/keyed-table'
import { KEYED } from '../../foundation/keyed-table/keyed-table-layout'
import type { KeyedPoolStats } from '../../foundation/keyed/keyed-pool'
import type { LiveRules, RuleStats } from '../../foundation/live-rules/live-rules'
import { type SharingOptions, resolveSharing } from '../../foundation/regions/sharing-options'
import type { SharedRegion } from '../../foundation/regions/shared-region'
import { Shed } from '../../foundation/errors/shed'
import { type Clock, coarseNow } from '../../foundation/signals/clock'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { openKeyLimitRegion, resolveMax } from './key-limit-region'
import { registerComponent } from '../../foundation/common/component-registry'

export interface KeyConcurrencyLimiterOptions extends SharingOptions {
  /** Requests in flight a key may have at once (an integer from 1 to 1 048 575), host-wide when shared. */
  max: number
  /**
   * Keys held at once (default 10 000, at most 8 388 608): a keyed table of 32 bytes a key, made now, one region for
   * the host when shared. A key with nothing in flight may give its slot to another key at no loss (a fresh slot
   * counts the same), so size it for the most keys busy at once, not for every key ever seen.
   */
  maxKeys?: number
  /**
   * Requests in flight that keys finding no slot share (every slot of their buckets busy, or a key over
   * `maxKeyLength`), in keys' worth of `max` (default 1 % of maxKeys, at least 1).
   */
  overflow?: number
  /** Longest key (UTF-16 units) that gets a slot of its own; a longer one counts on the overflow (default 256). */
  maxKeyLength?: number
  /** @internal Replaces the keys' fingerprint (tests of collisions). */
  fingerprint?: FingerprintFunction
}

/** The fields of a KeyConcurrencyLimiter's rule that `configure` changes at run time. */
export type KeyConcurrencyLimiterRule = Partial<Pick<KeyConcurrencyLimiterOptions, 'max'>> & ShadowRule

/** What `execute` takes: the caller's signal and the request's key. */
export interface KeyExecuteOptions extends ExecuteOptions {
  /** The key whose concurrency the call counts against. */
  key: string
}

/**
 * Counters of a KeyConcurrencyLimiter: its table's (`size` keys holding a slot, `created` slots claimed empty,
 * `evicted` slots taken from a key at rest; host-wide when shared) and its own (this member's).
 */
export interface KeyConcurrencyLimiterStats extends KeyedPoolStats {
  max: number
  /** Slots of the table: twice maxKeys. */
  capacity: number
  /** Requests this member admitted and has not released yet (all keys). */
  inFlight: number
  admitted: number
  /** Refused: the key had `max` in flight, or the overflow its limit, or a bound below was reached. */
  shed: number
  /** Requests in flight on the overflow now (host-wide), and the most it takes. */
  overflowInFlight: number
  overflowMax: number
  /** Requests refused because a slot's word kept changing under every compare-and-swap (bounded; trust guide). */
  contended: number
  /** Counts this member gave back for members that died holding them. */
  reclaimed: number
  /** tryAcquire calls with a key that is not a string (refused, not thrown). */
  invalidArguments: number
  /** release calls with a token that is not outstanding (ignored). */
  invalidReleases: number
  /** The live rule: its version (0 until `configure` first changed it) and values (`max`). */
  rules: RuleStats
}

/** How often a shared limiter gives back what members that died held (ms). */
const RECLAIM_EVERY = 500

/**
 * At most `max` requests in flight per key (a tenant, an API key, a client), host-wide when `shared`: Stripe's
 * concurrent-requests limiter, Sentinel's thread-count rule (docs/rules/key-concurrency.md). `tryAcquire(key)`
 * answers a token (>= 0) to give back with `release(token)` exactly once, or `Shed.keyConcurrency`. Every key's count
 * lives in one keyed table (docs/rules/keyed-table.md): no object, file or mapping per key; a key with nothing in
 * flight may give its slot to a new key; keys that find no slot share the overflow count. Neither call allocates or
 * throws. `max` is a live rule: `configure({ max })` (or `bulwark set`) changes it for every member of the host. A
 * member that dies holding requests has them given back by the others within about a second of the region
 * reaping it.
 */
export class KeyConcurrencyLimiter {
  readonly shared: string | undefined
  readonly maxKeys: number
  private limit: number
  private readonly region: SharedRegion
  private readonly table: CountTable
  private readonly rules: LiveRules
  private readonly journal: HolderJournal | undefined
  private readonly now: Clock
  private readonly tokens = new TokenTable(64)
  /** The slot number each outstanding token holds a count of, and its key, by token slot. */
  private readonly holders: number[] = []
  private readonly keys: (string | undefined)[] = []
  private readonly outcomes = new TokenOutcomes(this.tokens, (_ok, token) => this.release(token))
  private readonly counts = { admitted: 0, shed: 0, invalidArguments: 0, invalidReleases: 0, reclaimed: 0 }
  private readonly reclaimer: NodeJS.Timeout | undefined

  constructor(options: KeyConcurrencyLimiterOptions) {
    const o = checkOptions<KeyConcurrencyLimiterOptions>(options, 'options')
    this.limit = resolveMax(o.max)
    const idle = (o as { idleTimeout?: unknown }).idleTimeout
    if (idle !== undefined) throw new InvalidOptionError('idleTimeout', idle, 'left out: keys at rest give up slots')
    this.maxKeys = optionalNumber('maxKeys', o.maxKeys, 10_000, { integer: true, min: 1, max: KEYED.maxKeys })
    const fallback = Math.max(1, Math.ceil(this.maxKeys / 100))
    const overflowKeys = optionalNumber('overflow', o.overflow, fallback, { integer: true, min: 1, max: this.maxKeys })
    const maxKeyLength = optionalNumber('maxKeyLength', o.maxKeyLength, 256, { integer: true, min: 1, max: 4096 })
    if (o.fingerprint !== undefined && typeof o.fingerprint !== 'function')
      throw new InvalidOptionError('fingerprint', o.fingerprint, 'a function')
    const sharing = resolveSharing(o)
    this.shared = sharing.shared
    this.now = sharing.now ?? coarseNow
    // Last: a bad option above leaves no region behind.
    const opened = openKeyLimitRegion(
      sharing,
      this.limit,
      { maxKeys: this.maxKeys, overflowKeys, maxKeyLength },
      (max) => (this.limit = max),
      o.fingerprint,
    )
    ;({ region: this.region, table: this.table, rules: this.rules, journal: this.journal } = opened)
    if (this.journal !== undefined) {
      this.reclaimer = setInterval(() => this.reclaim(), RECLAIM_EVERY)
      this.reclaimer.unref()
    }
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

  /** A token (>= 0) if `key` has fewer than `max` requests in flight, else Shed.keyConcurrency. Never throws. */
  tryAcquire(key: string): number {
    if (typeof key !== 'string') {
      this.counts.invalidArguments++
      return this.refuse()
    }
    const rules = this.rules
    if (rules.i32[rules.index] !== rules.seen) rules.refresh()
    const token = this.tokens.acquire(0)
    if (token < 0) return this.refuse()
    const entry = this.tokens.slotOf(token)
    // A shared member notes what it holds in its journal, of JOURNAL_ENTRIES requests at once.
    const journaled = entry < JOURNAL_ENTRIES || this.journal === undefined
    const slot = journaled ? this.table.take(key, this.limit, entry, this.now()) : -1
    // In shadow mode (docs/rules/shadow.md) a key at its max is admitted holding no slot (-1: nothing to give back).
    if (slot < 0 && !(journaled && rules.shadowAdmits(0))) {
      this.tokens.release(token)
      return this.refuse()
    }
    this.holders[entry] = slot
    this.keys[entry] = key
    this.counts.admitted++
    return token
  }

  /** Gives back an admitted request's slot. A token released twice, or never handed out, is counted and ignored. */
  release(token: number): void {
    const entry = this.tokens.slotOf(token)
    if (this.tokens.release(token) === INVALID) {
      this.counts.invalidReleases++
      return
    }
    this.keys[entry] = undefined
    const slot = this.holders[entry]
    if (slot < 0) return // admitted in shadow mode: it held no slot
    // Given back before the journal forgets it: a member killed in between leaves a count too low, which heals.
    this.table.give(slot)
    this.journal?.drop(entry)
  }

  /** Runs `fn` holding one of `options.key`'s slots; rejects with OverloadError('key-concurrency') when it has none. */
  execute<T>(fn: GuardedFunction<T>, options: KeyExecuteOptions): Promise<T> {
    const error = startError(fn, options)
    if (error !== undefined) return Promise.reject(error)
    const token = this.tryAcquire(options?.key)
    if (token < 0) return Promise.reject(new OverloadError('key-concurrency', 1))
    return runGuarded(fn, options.signal, this.outcomes.of(token))
  }

  /** The key's requests in flight (host-wide when shared); 0 for a key that holds no slot. */
  inFlight(key: string): number {
    return this.table.inFlight(key)
  }

  /**
   * Calls `fn` with each key this member has requests in flight for, and the key's requests in flight (host-wide
   * when shared). The table keeps no key text: these are the keys of this member's outstanding tokens.
   */
  forEachKey(fn: (key: string, inFlight: number) => void): void {
    const seen = new Set<string>()
    for (const key of this.keys) {
      if (key === undefined || seen.has(key)) continue
      seen.add(key)
      fn(key, this.inFlight(key))
    }
  }

  /** Keys holding a slot now (host-wide when shared). */
  get size(): number {
    return this.table.size
  }

  stats(): KeyConcurrencyLimiterStats {
    const t = this.table
    const table = {
      size: t.size,
      maxKeys: this.maxKeys,
      capacity: t.capacity,
      created: t.total('created'),
      evicted: t.total('reused'),
      expired: 0,
      refused: t.total('overflowRefused'),
      overflowInFlight: t.overflowInFlight,
      overflowMax: t.overflowMax,
      contended: t.total('contended'),
    }
    const { admitted, shed, invalidArguments, invalidReleases, reclaimed } = this.counts
    const own = { admitted, shed, invalidArguments, invalidReleases, reclaimed, inFlight: this.tokens.outstanding }
    return { ...table, ...own, max: this.max, rules: this.rules.stats() }
  }

  /** Gives back what this member still holds, and detaches. Idempotent. */
  close(): void {
    if (this.region.closed) return
    if (this.reclaimer !== undefined) clearInterval(this.reclaimer)
    this.journal?.release((slot) => this.table.give(slot))
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** The table, for `bulwark top`'s and the metrics' views. @internal */
  get keyTable(): CountTable {
    return this.table
  }

  private reclaim(): void {
    if (this.journal === undefined || this.region.closed) return
    this.counts.reclaimed += this.journal.reclaim((slot) => this.table.give(slot))
  }

  private refuse(): number {
    this.counts.shed++
    return Shed.keyConcurrency
  }
}
registerComponent('KeyConcurrencyLimiter', KeyConcurrencyLimiter)

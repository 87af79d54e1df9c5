import { HeavyKeeper } from '../hotkeys/heavy-keeper'
import { KeyedLimiter } from '../ratelimit/keyed-limiter'
import type { Limiter } from '../ratelimit/limiter'
import { type SharingOptions, resolveSharing } from '../../foundation/regions/sharing-options'
import { coarseNow, type Clock } from '../../foundation/signals/clock'
import { checkFunction, checkOptions, optionalNumber } from '../../foundation/common/validate'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { registerComponent } from '../../foundation/common/component-registry'
import type { RuleStats } from '../../foundation/live-rules/live-rules'

/** The limit each hot value gets in a HotParameterLimiter's keyed table: a token bucket per value. */
export interface HotValueRule {
  /** Permits per second each hot value gets (> 0). */
  rate: number
  /** Each hot value's capacity (default: one second's worth, at least 1). */
  burst?: number
}

export interface HotParameterLimiterOptions extends SharingOptions {
  /**
   * The limit each hot value gets: `{ rate, burst }`, a token bucket per hot value in one keyed table (host-wide
   * with `shared`, docs/rules/keyed-table.md); or a factory of a limiter per value (this process's own).
   */
  hot: HotValueRule | ((value: string) => Limiter)
  /** One limit that every value that is not hot shares (default: none, they pass). */
  others?: Limiter
  /** How many hot values are tracked and limited (default 100): memory is bounded by it, whatever the values. */
  k?: number
  /** Counts are halved this often, ms (default 10 000): a value is hot for what it asked recently. */
  halfLife?: number
  /**
   * The HeavyKeeper that picks the hot values is one for the host under this name (default: this thread's); its
   * `namespace` and `maxMembers` are this limiter's. `now` is the clock of the fading and of the hot values' limiters.
   */
  shared?: string
}

export interface HotParameterLimiterStats {
  /** Hot values holding a limit of their own now (a slot of the table, or a limiter of the factory's). */
  limited: number
  /** Calls refused, by hot values' limiters and by the shared limit of the others. */
  refusedHot: number
  refusedOthers: number
  /** tryAcquire calls with a value that is not a string (refused, not thrown). */
  invalidArguments: number
  /**
   * The `{ rate, burst }` form: its table's live rule (a KeyedLimiter's, docs/rules/live-rules.md), shadow mode
   * included: what the hot values' limits would have refused while it is on (docs/rules/shadow.md).
   */
  rules?: RuleStats
}

/**
 * Sentinel-style parameter flow control (docs/rules/hot-parameters.md): a limit per value of a request parameter
 * (a user id, an item id) that costs memory only for the hot values. A HeavyKeeper counts every value and keeps
 * the k heaviest; those get their own limit (`hot`: a token bucket each in a keyed table of k keys, or a limiter of
 * the factory's); the others pass, or share the `others` limit. A value that turns hot while every slot holds a value
 * still refilling is not refused outright: it takes from the table's overflow (the factory form: the `others` limit).
 * Usable as an inbound guard's `rateLimit: { limiter, key }` (refusals answer 429).
 *
 * It has no live rule of its own: its limits are those of the limiters it is built on, and so is shadow mode
 * (docs/rules/shadow.md). With `shared`, the hot values' table is the KeyedLimiter region
 * `keyed-limiter.<namespace>.<shared>` (`bulwark set keyed-limiter.<shared> rate=... shadow=on`); the factory's
 * limiters and `others` are the application's own, switched with their `configure`.
 */
export class HotParameterLimiter {
  readonly k: number
  private readonly keeper: HeavyKeeper
  private readonly limiters: KeyedLimiter
  private readonly others: Limiter | undefined
  private readonly now: Clock
  private readonly halfLife: number
  private nextFadeAt = -Infinity
  private counts = { refusedHot: 0, refusedOthers: 0, invalidArguments: 0 }

  constructor(options: HotParameterLimiterOptions) {
    const o = checkOptions<HotParameterLimiterOptions>(options, 'options')
    const hot = o.hot
    const others = o.others as { tryAcquire?: unknown } | undefined
    if (others !== undefined && (others === null || typeof others.tryAcquire !== 'function'))
      throw new InvalidOptionError('others', others, 'a limiter with tryAcquire(), or undefined')
    this.others = o.others
    this.k = optionalNumber('k', o.k, 100, { integer: true, min: 1, max: 1_000_000 })
    this.halfLife = optionalNumber('halfLife', o.halfLife, 10_000, { above: 0, max: 3_600_000 })
    const { shared, namespace, maxMembers, now } = resolveSharing(o)
    this.now = now ?? coarseNow
    if (hot !== null && typeof hot === 'object') {
      const rule = hot as HotValueRule
      const table = { rate: rule.rate, burst: rule.burst, maxKeys: this.k, shared, namespace, maxMembers }
      this.limiters = new KeyedLimiter({ ...table, now: this.now })
    } else {
      const factory = checkFunction<(value: string) => Limiter>('hot', hot)
      // Twice k limiters: a value that turns hot while k others refill finds room (else it shares `others`).
      this.limiters = new KeyedLimiter(factory, { maxKeys: 2 * this.k, idleTimeout: this.halfLife * 4, now: this.now })
    }
    this.keeper = new HeavyKeeper({ k: this.k, shared, namespace, maxMembers })
  }

  /**
   * Takes `n` permits for `value`: from its own limiter when the value is hot, else from the shared limit of the
   * others (or none). Never throws: a value that is not a string is refused and counted.
   */
  tryAcquire(value: string, n = 1): boolean {
    if (typeof value !== 'string') {
      this.counts.invalidArguments++
      return false
    }
    const now = this.now()
    if (now >= this.nextFadeAt) this.fade(now)
    if (this.keeper.add(value)) {
      const limiters = this.limiters
      if (limiters.tryAcquire(value, n)) return true
      // The factory form's pool had no room (every limiter refilling): the value shares the others' limit.
      if (limiters.table === undefined && !limiters.has(value)) return this.other(n)
      this.counts.refusedHot++
      return false
    }
    return this.other(n)
  }

  /** Milliseconds until `value` may pass again (0 when it may now). */
  retryAfterMs(value: string, n = 1): number {
    if (typeof value === 'string' && this.limiters.has(value)) return this.limiters.retryAfterMs(value, n)
    return this.others === undefined ? 0 : this.others.retryAfterMs(n)
  }

  /** The hot values now, heaviest first, with their estimated counts. */
  hotValues(): Array<{ value: string; count: number }> {
    return this.keeper.list().map((item) => ({ value: item.key, count: item.count }))
  }

  stats(): HotParameterLimiterStats {
    const s = this.limiters.stats()
    const rules = s.table?.rules
    return rules === undefined ? { limited: s.size, ...this.counts } : { limited: s.size, ...this.counts, rules }
  }

  /** Closes the hot values' limiters and the HeavyKeeper (not `others`, which the caller made). Idempotent. */
  close(): void {
    this.limiters.close()
    this.keeper.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** The limit the values that are not hot share (none: they pass). */
  private other(n: number): boolean {
    if (this.others === undefined || this.others.tryAcquire(n)) return true
    this.counts.refusedOthers++
    return false
  }

  private fade(now: number): void {
    this.nextFadeAt = now + this.halfLife
    const epoch = Math.floor(now / this.halfLife)
    if (epoch >= 0) this.keeper.fadingOnce(epoch)
  }
}
registerComponent('HotParameterLimiter', HotParameterLimiter)

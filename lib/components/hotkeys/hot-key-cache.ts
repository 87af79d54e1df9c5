import type { Disposable } from '../../foundation/common/disposable'
import type { SharingOptions } from '../../foundation/regions/sharing-options'
import { type Clock, coarseNow } from '../../foundation/signals/clock'
import { checkOptions, optionalBoolean, optionalFunction, optionalNumber } from '../../foundation/common/validate'
import { type CacheRule, CacheRules } from './cache-rules'
import { HeavyKeeper, type HeavyKeeperStats, type TopKItem } from './heavy-keeper'
import { defaultWidth } from './heavy-keeper-options'
import { LruTtlCache } from './lru-ttl-cache'
import { registerComponent } from '../../foundation/common/component-registry'
import { Coalescer } from '../../foundation/common/coalescer'

export interface HotKeyCacheOptions extends SharingOptions {
  /** How many hot keys to track (default 100). The sketch is 1024 * max(1, floor(ln k)) wide and 4 deep. */
  k?: number
  /** Most values kept (default 1000). Always bounded: least recently used values go first. */
  capacity?: number
  /** How long a cached value lives, ms (default 100). */
  ttl?: number
  /** Cache the value of every key that is in the top-k when added with a value (default true). */
  autoCache?: boolean
  /** A key must be counted this many times before it can be hot (default 0). */
  minCount?: number
  /** Keys cached whenever added with a value, hot or not, with the rule's ttl (default: `ttl`). */
  allow?: CacheRule[]
  /** Keys never auto-cached, however hot. */
  deny?: Array<{ key: string } | { pattern: RegExp | string }>
  /** Halve every count each `fadeEvery` ms, so that keys that cooled down leave (default: never). */
  fadeEvery?: number
  /** Seed of the sketch's random decrements (default: random). */
  seed?: number
}

/**
 * What HotKeyCache.stats() reports. With `shared`, which keys are hot is host-wide; values, hits and misses are
 * this thread's.
 */
export interface HotKeyCacheStats {
  /** Values cached. */
  values: number
  /** Most values kept. */
  capacity: number
  /** get() calls that found a live value. */
  hits: number
  /** get() calls that found none (absent or expired). */
  misses: number
  /** addWithValue calls with a key that is not a string (ignored, not thrown). */
  invalidArguments: number
  /** The counting side: keys in the top-k, increments counted, ignored bad arguments. */
  topk: HeavyKeeperStats
}

/**
 * The hot-key cache (the reference `hotkey`, with our fixes): counts keys in a HeavyKeeper and keeps the values of
 * the hot ones in a bounded LRU with a TTL, so that the few keys that dominate the traffic (a flash-sale product,
 * a noisy tenant) are served from memory instead of Redis or the database.
 *
 * Values stay in this thread's heap (JavaScript values cannot be shared); with `shared`, which keys are hot is
 * decided host-wide. A key that leaves the top-k leaves the cache.
 */
export class HotKeyCache<V = unknown> {
  /** The counting side: list it, subscribe to expulsions, fade it. */
  readonly topk: HeavyKeeper<string>
  readonly ttl: number
  readonly autoCache: boolean
  private readonly cache: LruTtlCache<V>
  private readonly allow: CacheRules
  private readonly deny: CacheRules
  private readonly now: Clock
  private readonly expelledSubscription: Disposable
  private timer: ReturnType<typeof setInterval> | undefined
  private loads: Coalescer<V> | undefined = undefined
  private hits = 0
  private misses = 0
  private invalidArguments = 0

  constructor(options: HotKeyCacheOptions = {}) {
    const o = checkOptions<HotKeyCacheOptions>(options, 'options')
    const k = optionalNumber('k', o.k, 100, { integer: true, min: 1, max: 2 ** 24 })
    const capacity = optionalNumber('capacity', o.capacity, 1000, { integer: true, min: 1, max: 2 ** 32 })
    this.ttl = optionalNumber('ttl', o.ttl, 100, { above: 0 })
    this.autoCache = optionalBoolean('autoCache', o.autoCache, true)
    this.now = optionalFunction<Clock>('now', o.now) ?? coarseNow
    this.allow = new CacheRules('allow', o.allow, this.ttl)
    this.deny = new CacheRules('deny', o.deny, this.ttl)
    const fadeEvery =
      o.fadeEvery === undefined ? undefined : optionalNumber('fadeEvery', o.fadeEvery, 0, { min: 1, max: 2 ** 31 - 1 })
    this.cache = new LruTtlCache<V>(capacity)
    this.topk = new HeavyKeeper<string>({
      k,
      width: defaultWidth(k),
      depth: 4,
      decay: 0.925,
      minCount: o.minCount,
      shared: o.shared,
      maxMembers: o.maxMembers,
      seed: o.seed,
    })
    this.expelledSubscription = this.topk.onExpelled((item) => this.cache.delete(item.key))
    if (fadeEvery !== undefined) {
      this.timer = setInterval(() => this.fadeTick(fadeEvery), fadeEvery)
      this.timer.unref() // a hot-key cache never keeps the process alive
    }
  }

  /** Counts `key`; returns whether it is hot (in the top-k) afterwards. */
  add(key: string, incr = 1): boolean {
    return this.topk.add(key, incr)
  }

  /**
   * Counts `key` and caches `value` for it if it is hot (with autoCache, unless a deny rule matches), or else if
   * an allow rule matches (with that rule's ttl). Returns whether the key is hot. Never throws: a key that is not a
   * string is ignored and counted in stats().
   */
  addWithValue(key: string, value: V, incr = 1): boolean {
    if (typeof key !== 'string') {
      this.invalidArguments++
      return false
    }
    const hot = this.topk.add(key, incr)
    if (hot && this.autoCache) {
      if (this.deny.empty || this.deny.match(key) < 0) this.cache.set(key, value, this.now() + this.ttl)
      return hot
    }
    if (!this.allow.empty) {
      const ttl = this.allow.match(key)
      if (ttl >= 0) this.cache.set(key, value, this.now() + ttl)
    }
    return hot
  }

  /** The cached value, or undefined when the key is not cached or its value expired. */
  get(key: string): V | undefined {
    const value = this.cache.get(key, this.now())
    if (value === undefined) this.misses++
    else this.hits++
    return value
  }

  /**
   * The cached value of `key`, or `load(key)`'s, counted and cached as addWithValue would. Concurrent misses of
   * one key share one load (a Coalescer): a hot key's expiry sends one call to the origin, not one per request.
   */
  getOrLoad(key: string, load: (key: string) => Promise<V>): Promise<V> {
    const value = this.get(key)
    if (value !== undefined) {
      this.topk.add(key)
      return Promise.resolve(value)
    }
    const loads = (this.loads ??= new Coalescer<V>({ maxKeys: this.cache.capacity }))
    return loads
      .run(key, () => load(key))
      .then((loaded) => {
        this.addWithValue(key, loaded)
        return loaded
      })
  }

  /** Drops a cached value (the key keeps its count). */
  delete(key: string): boolean {
    return this.cache.delete(key)
  }

  /** The hot keys, count descending (host-wide when shared). */
  list(): TopKItem<string>[] {
    return this.topk.list()
  }

  /** Halves every count now (keys that reach 0 leave the top-k and the cache). */
  fading(): void {
    this.topk.fading()
  }

  /** Values cached. */
  get size(): number {
    return this.cache.size
  }

  stats(): HotKeyCacheStats {
    return {
      values: this.cache.size,
      capacity: this.cache.capacity,
      hits: this.hits,
      misses: this.misses,
      invalidArguments: this.invalidArguments,
      topk: this.topk.stats(),
    }
  }

  /** Stops the fading timer, drops the values and detaches the counts. Idempotent. */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    this.expelledSubscription.dispose()
    this.cache.clear()
    this.topk.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  // Shared: every member's timer claims the period, so the host fades once per period however many workers run.
  private fadeTick(fadeEvery: number): void {
    if (this.topk.shared === undefined) this.topk.fading()
    else this.topk.fadingOnce(Math.floor(this.now() / fadeEvery))
  }
}
registerComponent('HotKeyCache', HotKeyCache)

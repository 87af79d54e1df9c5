import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { coarseNow, type Clock } from '../signals/clock'
import { checkFunction, checkOptions, optionalFunction, optionalNumber } from '../validate'
import type { Limiter } from './limiter'

export interface KeyedLimiterOptions {
  /** Most keys held at once (default 10 000); past it the least recently used key is evicted. */
  maxKeys?: number
  /**
   * A key unused for this long (ms, default 60 000) is dropped, and starts afresh if it comes back. Make it at
   * least the time the limiter takes to return to rest (burst / rate for a token bucket, the window for a sliding
   * window), or a returning key gets more than its share.
   */
  idleTimeout?: number
  /** Monotonic clock in ms (default: the coarse clock). */
  now?: Clock
}

/** Counters of a KeyedLimiter. */
export interface KeyedLimiterStats {
  size: number
  /** Limiters created (first sight of a key, or its return after expiry or eviction). */
  created: number
  /** Keys dropped because the map was full. */
  evicted: number
  /** Keys dropped because they were idle. */
  expired: number
  /** tryAcquire calls with a key that is not a string (refused, not thrown). */
  invalidArguments: number
}

class Entry<L> {
  constructor(
    readonly limiter: L,
    public lastUsed: number,
    /** When the entry was last moved to the back of the map's order. */
    public movedAt: number,
  ) {}
}

// Expired entries removed at the front of the map each time a key is added: a few, so an insert stays cheap,
// yet more than one, so the map shrinks faster than it grows once keys go idle.
const SWEEP_PER_INSERT = 4

/**
 * One limiter per key (client, route, tenant...), made on first use by `factory`, in a bounded map that cleans
 * itself: no timer per key. The map's insertion order approximates recency (an entry used again is moved to the
 * back at most once per `idleTimeout / 8`, at most once a second), so eviction of the least recent key and removal
 * of idle keys both work from the front, a few entries at a time, when keys are added.
 */
export class KeyedLimiter<L extends Limiter = Limiter> {
  readonly maxKeys: number
  readonly idleTimeout: number
  private readonly factory: (key: string) => L
  private readonly entries = new Map<string, Entry<L>>()
  private readonly moveInterval: number
  private readonly now: Clock
  private counts = { created: 0, evicted: 0, expired: 0, invalidArguments: 0 }

  constructor(factory: (key: string) => L, options?: KeyedLimiterOptions) {
    this.factory = checkFunction<(key: string) => L>('factory', factory)
    const o = checkOptions<KeyedLimiterOptions>(options, 'options')
    this.maxKeys = optionalNumber('maxKeys', o.maxKeys, 10_000, { min: 1, integer: true })
    this.idleTimeout = optionalNumber('idleTimeout', o.idleTimeout, 60_000, { above: 0 })
    this.now = optionalFunction<Clock>('now', o.now) ?? coarseNow
    this.moveInterval = Math.min(this.idleTimeout / 8, 1000)
  }

  /** The limiter of `key`, made by the factory if the key is new (or came back after expiring). */
  get(key: string): L {
    const now = this.now()
    const entry = this.entries.get(key)
    if (entry !== undefined) {
      if (now - entry.lastUsed <= this.idleTimeout) {
        entry.lastUsed = now
        if (now - entry.movedAt > this.moveInterval) {
          this.entries.delete(key)
          this.entries.set(key, entry)
          entry.movedAt = now
        }
        return entry.limiter
      }
      this.drop(key, entry)
      this.counts.expired++
    }
    return this.add(key, now)
  }

  /** `get(key).tryAcquire(n)`. Never throws: a key that is not a string is refused and counted in stats(). */
  tryAcquire(key: string, n = 1): boolean {
    if (typeof key !== 'string') {
      this.counts.invalidArguments++
      return false
    }
    return this.get(key).tryAcquire(n)
  }

  /** Whether `key` has a live limiter (does not count as a use). */
  has(key: string): boolean {
    const entry = this.entries.get(key)
    return entry !== undefined && this.now() - entry.lastUsed <= this.idleTimeout
  }

  delete(key: string): boolean {
    const entry = this.entries.get(key)
    if (entry === undefined) return false
    this.drop(key, entry)
    return true
  }

  /** Removes every idle key now; returns how many. Not needed for bounded memory, which holds without it. */
  prune(): number {
    const now = this.now()
    let removed = 0
    for (const [key, entry] of this.entries) {
      if (now - entry.lastUsed > this.idleTimeout) {
        this.drop(key, entry)
        removed++
      }
    }
    this.counts.expired += removed
    return removed
  }

  clear(): void {
    for (const [key, entry] of this.entries) this.drop(key, entry)
  }

  /** Drops every key and closes its limiter. Idempotent. */
  close(): void {
    this.clear()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  get size(): number {
    return this.entries.size
  }

  stats(): KeyedLimiterStats {
    return { size: this.entries.size, ...this.counts }
  }

  private add(key: string, now: number): L {
    if (typeof key !== 'string') throw new InvalidArgumentError('key', key, 'a string')
    this.sweep(now)
    if (this.entries.size >= this.maxKeys) {
      // The front is the least recently moved entry; its last use is within moveInterval of the oldest.
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, Entry<L>]
      this.drop(oldestKey, oldest)
      this.counts.evicted++
    }
    const limiter = this.factory(key)
    this.entries.set(key, new Entry(limiter, now, now))
    this.counts.created++
    return limiter
  }

  private sweep(now: number): void {
    let budget = SWEEP_PER_INSERT
    for (const [key, entry] of this.entries) {
      if (budget-- === 0 || now - entry.lastUsed <= this.idleTimeout) return
      this.drop(key, entry)
      this.counts.expired++
    }
  }

  private drop(key: string, entry: Entry<L>): void {
    this.entries.delete(key)
    entry.limiter.close()
  }
}

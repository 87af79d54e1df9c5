import { keySharedName } from '../breakers/breaker-names'
import { resolveKeyedOptions } from '../shared/keyed-options'
import { type Clock, coarseNow } from '../signals/clock'
import { checkOptions } from '../validate'
import { AdaptiveBulkhead } from './adaptive-bulkhead'
import type { AdaptiveBulkheadOptions } from './bulkhead-options'

export interface BulkheadPoolOptions {
  /** Options of every upstream's bulkhead (`shared` and `now` excepted: see below). */
  bulkhead?: Omit<AdaptiveBulkheadOptions, 'shared' | 'now'>
  /** Most upstreams held at once (default 1000): past it the least recently used one at rest is dropped. */
  maxKeys?: number
  /** An upstream unused for this long (ms) is dropped when at rest, and starts afresh if it comes back (60 000). */
  idleTimeout?: number
  /** Share every upstream's bulkhead across the host: upstream u gets `<shared>.<u, made safe>.<hash of u>`. */
  shared?: string
  /** Monotonic clock, ms (default: the coarse clock); the bulkheads use it too. */
  now?: Clock
}

interface Entry {
  bulkhead: AdaptiveBulkhead
  usedAt: number
}

/**
 * One adaptive bulkhead per upstream (an origin, a gRPC target), made on first use, with bounded memory: an
 * upstream idle for `idleTimeout` and, past `maxKeys`, the least recently used ones are dropped when a new one
 * comes, but never while they hold calls in flight (dropping those would let the upstream start afresh with no
 * limit). The keyed-collection rule of docs/vocabulary.md; a hit is one Map look-up and one store.
 */
export class BulkheadPool {
  readonly shared: string | undefined
  private readonly options: Omit<AdaptiveBulkheadOptions, 'shared' | 'now'>
  private readonly maxKeys: number
  private readonly idleTimeout: number
  private readonly now: Clock
  // Map order is the order of last use (a hit moves its entry to the back, at most once per coarse tick).
  private readonly entries = new Map<string, Entry>()

  constructor(options?: BulkheadPoolOptions) {
    const given = checkOptions<BulkheadPoolOptions>(options, 'options')
    this.options = checkOptions<Omit<AdaptiveBulkheadOptions, 'shared' | 'now'>>(given.bulkhead, 'bulkhead')
    const o = resolveKeyedOptions(given)
    this.maxKeys = o.maxKeys
    this.idleTimeout = o.idleTimeout
    this.now = o.now
    this.shared = o.shared
    new AdaptiveBulkhead(this.options).close() // a bad bulkhead option fails now, naming its field, not at first use
  }

  /** The bulkhead of `upstream`, made now if it is new or was dropped. */
  get(upstream: string): AdaptiveBulkhead {
    const now = this.now()
    const entry = this.entries.get(upstream)
    if (entry !== undefined) {
      if (entry.usedAt !== now) {
        entry.usedAt = now
        this.entries.delete(upstream)
        this.entries.set(upstream, entry)
      }
      return entry.bulkhead
    }
    this.makeRoom(now)
    const bulkhead = this.make(upstream)
    this.entries.set(upstream, { bulkhead, usedAt: now })
    return bulkhead
  }

  has(upstream: string): boolean {
    return this.entries.has(upstream)
  }

  get size(): number {
    return this.entries.size
  }

  /** Calls `fn` with each upstream's bulkhead, without counting as a use (for metrics and diagnostics). */
  forEach(fn: (bulkhead: AdaptiveBulkhead, upstream: string) => void): void {
    for (const [upstream, entry] of this.entries) fn(entry.bulkhead, upstream)
  }

  /** Drops every upstream and closes its bulkhead. Idempotent. */
  close(): void {
    for (const entry of this.entries.values()) entry.bulkhead.close()
    this.entries.clear()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  private make(upstream: string): AdaptiveBulkhead {
    const shared = this.shared === undefined ? undefined : keySharedName(this.shared, upstream)
    return new AdaptiveBulkhead({ ...this.options, shared, now: this.now === coarseNow ? undefined : this.now })
  }

  /** Drops idle upstreams at rest, then the least recently used ones at rest until a new one fits. */
  private makeRoom(now: number): void {
    for (const [upstream, entry] of this.entries) {
      const atRest = entry.bulkhead.inFlight === 0
      if (atRest && (now - entry.usedAt >= this.idleTimeout || this.entries.size >= this.maxKeys)) {
        this.entries.delete(upstream)
        entry.bulkhead.close()
      } else if (now - entry.usedAt < this.idleTimeout && this.entries.size < this.maxKeys) {
        break // the rest were used more recently still
      }
    }
  }
}

import { KeyedPool, type KeyedPoolStats } from '../../foundation/keyed/keyed-pool'
import type { KeyedOptions } from '../../foundation/keyed/keyed-options'
import { boundedKey } from '../../foundation/common/bounded-key'
import { coarseNow } from '../../foundation/signals/clock'
import { checkOptions } from '../../foundation/common/validate'
import { AdaptiveBulkhead } from './adaptive-bulkhead'
import type { AdaptiveBulkheadOptions } from './bulkhead-options'
import { registerComponent } from '../../foundation/common/component-registry'

export interface BulkheadPoolOptions extends KeyedOptions {
  /** Options of every upstream's bulkhead (`shared` and `now` excepted: the pool's apply). */
  bulkhead?: Omit<AdaptiveBulkheadOptions, 'shared' | 'now'>
}

export type BulkheadPoolStats = KeyedPoolStats

const timeToRest = (bulkhead: AdaptiveBulkhead): number => (bulkhead.inFlight === 0 ? 0 : Infinity)

/**
 * Upstreams a shared pool holds by default: each is a region of about 85 KiB at 64 members, so 64 upstreams cost the
 * host about 5.3 MiB of shared memory (docs/guide/trust.md); upstreams are origins a gateway calls: a few, not many.
 */
export const SHARED_POOL_MAX_KEYS = 64

/**
 * One adaptive bulkhead per upstream (an origin, a gRPC target), made on first use, in a KeyedPool: bounded by
 * `maxKeys` (default 1000; 64 when `shared`), no timer per upstream; an upstream longer than 128 characters is kept as
 * a prefix and a hash (boundedKey). A bulkhead is at rest when it has no call in flight; one with calls in flight is
 * never dropped (the upstream would start afresh with no limit). When every upstream the pool looks at has calls in
 * flight, a new upstream is refused: `get` returns undefined and the call is rejected, as a full bulkhead would reject
 * it.
 */
export class BulkheadPool {
  declare private readonly pool: KeyedPool<AdaptiveBulkhead>

  constructor(options?: BulkheadPoolOptions) {
    const o = checkOptions<BulkheadPoolOptions>(options, 'options')
    const bulkhead = checkOptions<Omit<AdaptiveBulkheadOptions, 'shared' | 'now'>>(o.bulkhead, 'bulkhead')
    const now = o.now === coarseNow ? undefined : o.now
    this.pool = new KeyedPool(
      (_upstream, shared) => new AdaptiveBulkhead({ ...bulkhead, shared, now }),
      { maxKeys: o.maxKeys, idleTimeout: o.idleTimeout, shared: o.shared, now: o.now, timeToRest },
      o.shared === undefined ? 1000 : SHARED_POOL_MAX_KEYS,
    )
    new AdaptiveBulkhead(bulkhead).close() // a bad bulkhead option fails now, naming its field, not at first use
  }

  get shared(): string | undefined {
    return this.pool.shared
  }

  get maxKeys(): number {
    return this.pool.maxKeys
  }

  /** The bulkhead of `upstream`, made now if it is new; undefined when the pool has no room for it. */
  get(upstream: string): AdaptiveBulkhead | undefined {
    return this.pool.get(boundedKey(upstream))
  }

  /** Whether `upstream` has a bulkhead: true exactly when get(upstream) returns the one it has. */
  has(upstream: string): boolean {
    return this.pool.has(boundedKey(upstream))
  }

  get size(): number {
    return this.pool.size
  }

  /** Calls `fn` with each upstream's bulkhead, without counting as a use (for metrics and diagnostics). */
  forEach(fn: (bulkhead: AdaptiveBulkhead, upstream: string) => void): void {
    this.pool.forEach(fn)
  }

  stats(): BulkheadPoolStats {
    return this.pool.stats()
  }

  /** Drops every upstream and closes its bulkhead. Idempotent. */
  close(): void {
    this.pool.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }
}
registerComponent('BulkheadPool', BulkheadPool)

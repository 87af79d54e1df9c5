// Every component has close() (idempotent) and [Symbol.dispose]() calling it, and stats() returning its named type.
import { describe, expect, it } from 'vitest'

import {
  AdaptiveBulkhead,
  type AdaptiveBulkheadStats,
  BbrLimiter,
  type BbrLimiterStats,
  BreakerGroup,
  BulkheadPool,
  type BulkheadPoolStats,
  CircuitBreaker,
  type CircuitBreakerStats,
  GrayRouter,
  HeavyKeeper,
  type HeavyKeeperStats,
  HotKeyCache,
  type HotKeyCacheStats,
  HotParameterLimiter,
  type HotParameterLimiterStats,
  KeyConcurrencyLimiter,
  type KeyConcurrencyLimiterStats,
  KeyedLimiter,
  KeyedPool,
  type KeyedPoolStats,
  type KeyedLimiterStats,
  listRegions,
  RegionLayout,
  RetryBudget,
  type RetryBudgetStats,
  SharedRegion,
  SlidingWindowLimiter,
  type SlidingWindowLimiterStats,
  SreBreaker,
  type SreBreakerStats,
  TokenBucket,
  type TokenBucketStats,
} from '../../lib/index'
import { httpGuard, type InboundGuardStats } from '../../lib/entries/http'
import { RedisRateLimiter, type RedisRateLimiterStats } from '../../lib/entries/redis'
import { HostWatcher } from '../../lib/entries/top'
import { defaultNamespace } from '../../lib/foundation/regions/namespace'
import { uniqueName } from '../helpers/unique-name'

interface Closable {
  close(): void
  [Symbol.dispose](): void
  stats(): object
}

const noRedis = { evalsha: () => new Promise(() => undefined), eval: () => new Promise(() => undefined) }

// [component, its kind's region prefix (shared components), the stats it reports now]
const makers: Array<[string, (shared: string) => Closable, string | undefined]> = [
  ['BbrLimiter', (shared) => new BbrLimiter({ shared }), 'bbr'],
  ['AdaptiveBulkhead', (shared) => new AdaptiveBulkhead({ shared }), 'bulkhead'],
  ['SreBreaker', (shared) => new SreBreaker({ shared }), 'sre'],
  ['CircuitBreaker', (shared) => new CircuitBreaker({ shared }), 'circuit'],
  ['TokenBucket', (shared) => new TokenBucket({ shared, rate: 10 }), 'token-bucket'],
  ['SlidingWindowLimiter', (shared) => new SlidingWindowLimiter({ shared, limit: 5, window: 1000 }), 'sliding-window'],
  ['RetryBudget', (shared) => new RetryBudget({ shared }), 'retry-budget'],
  ['HeavyKeeper', (shared) => new HeavyKeeper({ shared, k: 4, seed: 1 }), 'heavykeeper'],
  ['HotKeyCache', (shared) => new HotKeyCache({ shared, k: 4, seed: 1 }), 'heavykeeper'],
  ['KeyedLimiter', () => new KeyedLimiter(() => new TokenBucket({ rate: 1 })), undefined],
  ['BreakerGroup', () => Object.assign(new BreakerGroup(() => new SreBreaker()), { stats: () => ({}) }), undefined],
  ['RedisRateLimiter', () => new RedisRateLimiter({ redis: noRedis, limit: 10, window: 1000 }), undefined],
  ['InboundGuard', () => httpGuard(() => undefined, { limiter: {} }).guard, undefined],
  ['KeyedPool', () => new KeyedPool(() => new TokenBucket({ rate: 1 })), undefined],
  ['BulkheadPool', () => new BulkheadPool(), undefined],
  ['KeyConcurrencyLimiter', () => new KeyConcurrencyLimiter({ max: 2 }), undefined],
  [
    'HotParameterLimiter',
    (shared) => new HotParameterLimiter({ shared, hot: () => new TokenBucket({ rate: 1 }) }),
    'heavykeeper',
  ],
  ['GrayRouter', (shared) => new GrayRouter({ shared, groups: ['a'], fallback: 'a' }), 'routing'],
  // Not components, but exported with close(): a region a caller opened, and bulwark top's watcher.
  ['SharedRegion', (shared) => regionWithStats(shared), 'raw'],
  ['HostWatcher', () => Object.assign(new HostWatcher(), { stats: () => ({}) }), undefined],
]

function regionWithStats(shared: string): Closable {
  const layout = new RegionLayout('raw', 1)
  layout.cell()
  const region = SharedRegion.open(`${defaultNamespace()}.${shared}`, layout)
  return Object.assign(region, { stats: () => ({}) })
}

describe.each(makers)('%s', (_name, make, kind) => {
  it('close() is idempotent and [Symbol.dispose]() closes it', () => {
    const shared = uniqueName('life')
    const c = make(shared)
    const region = `${kind}.${defaultNamespace()}.${shared}` // its application namespace (docs/guide/trust.md)
    expect(listRegions().includes(region)).toBe(kind !== undefined) // a shared component's region is listed
    c[Symbol.dispose]()
    expect(listRegions()).not.toContain(region)
    expect(() => c.close()).not.toThrow()
    expect(() => c[Symbol.dispose]()).not.toThrow()
  })
})

describe('stats() types', () => {
  it('are named and exported, one per component', () => {
    // Compile-time: each assignment below fails to type-check if a stats() stops returning its named type.
    const bbr: BbrLimiterStats = new BbrLimiter().stats()
    const bulkhead: AdaptiveBulkheadStats = new AdaptiveBulkhead().stats()
    const sre: SreBreakerStats = new SreBreaker().stats()
    const circuit: CircuitBreakerStats = new CircuitBreaker().stats()
    const bucket: TokenBucketStats = new TokenBucket({ rate: 2 }).stats()
    const window: SlidingWindowLimiterStats = new SlidingWindowLimiter({ limit: 2, window: 10 }).stats()
    const keyed: KeyedLimiterStats = new KeyedLimiter(() => new TokenBucket({ rate: 1 })).stats()
    const budget: RetryBudgetStats = new RetryBudget().stats()
    const topk: HeavyKeeperStats = new HeavyKeeper({ k: 2, seed: 1 }).stats()
    const cache: HotKeyCacheStats = new HotKeyCache({ k: 2, seed: 1 }).stats()
    const redis: RedisRateLimiterStats = new RedisRateLimiter({ redis: noRedis, limit: 1, window: 10 }).stats()
    const guard: InboundGuardStats = httpGuard(() => undefined, { limiter: false }).guard.stats()
    expect(
      bbr.admitted + bulkhead.admitted + sre.calls + circuit.calls + keyed.size + budget.requests + redis.pending,
    ).toBe(0)
    expect([bucket.available, window.available, topk.keys, cache.values, guard.rateLimited]).toEqual([2, 2, 0, 0, 0])
    const pool: KeyedPoolStats = new KeyedPool(() => new TokenBucket({ rate: 1 })).stats()
    const bulkheads: BulkheadPoolStats = new BulkheadPool().stats()
    const perKey: KeyConcurrencyLimiterStats = new KeyConcurrencyLimiter({ max: 1 }).stats()
    const hotParameters: HotParameterLimiterStats = new HotParameterLimiter({
      hot: () => new TokenBucket({ rate: 1 }),
    }).stats()
    expect([pool.size, bulkheads.size, perKey.size, hotParameters.limited]).toEqual([0, 0, 0, 0])
  })
})

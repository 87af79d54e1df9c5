// bulwark: overload protection for Node gateways.

// The components a gateway starts with (BbrLimiter, the two breakers, TokenBucket), the errors and the shed codes:
// everything 'bulwark/core' exports, the same classes.
export * from './entries/core'
// The Redis tier's error (its limiter is 'bulwark/redis'): a type guard in the core recognises it
export { RedisError } from './foundation/errors/redis-error'

// Signals and clocks
export {
  cpuUsage,
  eventLoopUtilization,
  eventLoopDelay,
  eventLoopDelayRaw,
  eventLoopDelayMin,
} from './foundation/signals/signals'
export { memoryUsage, residentMemory } from './foundation/signals/memory-signals'
export type { MemoryInfo } from './foundation/signals/memory-signals'
export { loadInfo, configureSampler } from './foundation/signals/sampler-control'
export type { LoadInfo, SamplerOptions } from './foundation/signals/sampler-control'
export { coarseNow, preciseNow } from './foundation/signals/clock'
export type { Clock } from './foundation/signals/clock'

// Shared state
export { SharedRegion, DEFAULT_MEMBER_CAPACITY } from './foundation/regions/shared-region'
export type { NativeMember } from './foundation/native/native-types'
export { RegionLayout } from './foundation/regions/region-layout'
export type { WindowPlacement, LanePlacement } from './foundation/regions/region-layout'
export { RollingWindow } from './foundation/regions/rolling-window'
export type { BucketTotals } from './foundation/regions/rolling-window'
export { LaneCounter } from './foundation/regions/lane-counter'
export { AtomicCounter } from './foundation/regions/atomic-counter'
export { listRegions, removeRegion, removeStaleRegions } from './foundation/regions/regions'
export { defaultNamespace, NAMESPACE_ENV, splitRegionName } from './foundation/regions/namespace'

// Keyed collections: one bounded pool of per-key components, one eviction rule
export { KeyedPool } from './foundation/keyed/keyed-pool'
export type { KeyedFactory, KeyedPoolOptions, KeyedPoolStats, PoolMember } from './foundation/keyed/keyed-pool'
export type { KeyedOptions } from './foundation/keyed/keyed-options'

// BBR adaptive limiter: what the core entry leaves out
export type { AdmissionQueueStats } from './admission/queue/admission-queue'

// Adaptive bulkheads (one per upstream: the outbound guards make them)
export { AdaptiveBulkhead } from './components/bulkhead/adaptive-bulkhead'
export type { AdaptiveBulkheadStats } from './components/bulkhead/adaptive-bulkhead'
export type { AdaptiveBulkheadOptions, AdaptiveBulkheadRule } from './components/bulkhead/bulkhead-options'
export { BulkheadPool } from './components/bulkhead/bulkhead-pool'
export type { BulkheadPoolOptions, BulkheadPoolStats } from './components/bulkhead/bulkhead-pool'
export { BulkheadRejectedError } from './foundation/errors/bulkhead-rejected-error'

// Breakers, fallbacks and retry budgets
export { BreakerGroup } from './components/breakers/breaker-group'
export type { BreakerFactory, BreakerGroupOptions, BreakerGroupStats } from './components/breakers/breaker-group'
export { FallbackChainError } from './foundation/errors/fallback-chain-error'
export { withFallbacks } from './components/resilience/fallback'
export type { FallbackStep } from './components/resilience/fallback'
export { RetryBudget } from './components/resilience/retry-budget'
export type { RetryBudgetOptions, RetryBudgetRule, RetryBudgetStats } from './components/resilience/retry-budget'
export { retry } from './components/resilience/retry'
export type { RetryOptions } from './components/resilience/retry'
export { fullJitterDelay } from './components/resilience/backoff'

// Hot keys
export { HeavyKeeper } from './components/hotkeys/heavy-keeper'
export type { HeavyKeeperStats, TopKItem } from './components/hotkeys/heavy-keeper'
export type { HeavyKeeperOptions } from './components/hotkeys/heavy-keeper-options'
export { HotKeyCache } from './components/hotkeys/hot-key-cache'
export type { HotKeyCacheOptions, HotKeyCacheStats } from './components/hotkeys/hot-key-cache'
export type { CacheRule, KeyRule, PatternRule } from './components/hotkeys/cache-rules'

// Rate limiters and subsetting
export { SlidingWindowLimiter } from './components/ratelimit/sliding-window-limiter'
export type {
  SlidingWindowLimiterOptions,
  SlidingWindowLimiterRule,
  SlidingWindowLimiterStats,
} from './components/ratelimit/sliding-window-limiter'
export { KeyedLimiter } from './components/ratelimit/keyed-limiter'
export { HotParameterLimiter } from './components/key-limits/hot-parameter-limiter'
export type {
  HotParameterLimiterOptions,
  HotParameterLimiterStats,
  HotValueRule,
} from './components/key-limits/hot-parameter-limiter'
export { KeyConcurrencyLimiter } from './components/key-limits/key-concurrency-limiter'
export type {
  KeyConcurrencyLimiterOptions,
  KeyConcurrencyLimiterRule,
  KeyConcurrencyLimiterStats,
  KeyExecuteOptions,
} from './components/key-limits/key-concurrency-limiter'
export type {
  HeavyKey,
  KeyedLimiterOptions,
  KeyedLimiterRule,
  KeyedLimiterStats,
  KeyedLimiterTableOptions,
  KeyedTableStats,
} from './components/ratelimit/keyed-limiter'
export type { Limiter } from './components/ratelimit/limiter'

// Waiting for permits, reserving and settling costs, quotas of requests and cost (docs/guide/ratelimit.md)
export { Reservation } from './components/ratelimit/waiting/reservation'
export type { AcquireOptions } from './components/ratelimit/waiting/acquire-options'
export type { PermitQueueStats } from './components/ratelimit/waiting/permit-queue'
export type { WaitingOptions } from './components/ratelimit/waiting/limiter-permits'
export { Quota } from './components/ratelimit/quota'
export type { QuotaOptions, QuotaStats, UpstreamLimits } from './components/ratelimit/quota'
export { Coalescer } from './foundation/common/coalescer'
export type { CoalescerOptions, CoalescerStats } from './foundation/common/coalescer'
export { Hedger } from './components/resilience/hedger'
export type { HedgerOptions, HedgerStats } from './components/resilience/hedger'
export { subset } from './components/subset/subset'
export { ConsistentHash } from './components/subset/consistent-hash'
export type { ConsistentHashOptions } from './components/subset/consistent-hash'

// Operator switches: force shedding or fallbacks for a component, host-wide (docs/guide/degrade.md)
export { Switchboard } from './components/switches/switchboard'
export type { SwitchboardOptions, SwitchMode, SwitchState, SwitchTarget } from './components/switches/switchboard'

// Gray routing: an upstream group per request by live, host-wide rules (docs/readme/integrations.md, "Gray routing")
export { GrayRouter } from './components/routing/gray-router'
export type { GrayRouterOptions, GrayRouterStats, RouteRule } from './components/routing/gray-router'

// Allow and deny lists, bans: live, bounded, host-wide when shared (docs/guide/gateway.md)
export { AccessList } from './components/access/access-list'
export type { AccessEntry, AccessListOptions, AccessListStats, AccessMode } from './components/access/access-list'
export { BanList } from './components/access/ban-list'
export type { BanListOptions, BanListStats } from './components/access/ban-list'

// Framework integrations, the Redis tier, the exporters and the read-only view of the host are subpaths, loaded
// only by those who import them (docs/vocabulary.md, "Module layout"): 'bulwark/http', 'bulwark/express',
// 'bulwark/fastify', 'bulwark/koa', 'bulwark/grpc', 'bulwark/undici', 'bulwark/redis', 'bulwark/prometheus',
// 'bulwark/opentelemetry', 'bulwark/top'.

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './entries/rules-env'

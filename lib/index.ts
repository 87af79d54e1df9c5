// bulwark: overload protection for Node gateways.

// Errors: every one has a stable `code` and a type guard that works across copies of the package
export { BulwarkError } from './errors/bulwark-error'
export {
  isAbortedError,
  isBreakerOpenError,
  isBulkheadRejectedError,
  isBulwarkError,
  isFallbackChainError,
  isInvalidArgumentError,
  isInvalidOptionError,
  isMissingPeerDependencyError,
  isNativeLoadError,
  isOverloadError,
  isRedisError,
  isRegionCorruptError,
  isRegionMismatchError,
  isRegionOwnerError,
  isSharedMemoryError,
} from './errors/error-guards'
export type { BulwarkErrorCode, BulwarkErrorCodes } from './errors/error-guards'
export { AbortedError } from './errors/aborted-error'
export { InvalidOptionError } from './errors/invalid-option-error'
export { InvalidArgumentError } from './errors/invalid-argument-error'
export { NativeLoadError } from './errors/native-load-error'
export { RedisError } from './errors/redis-error'
export { RegionMismatchError } from './errors/region-mismatch-error'
export { RegionCorruptError } from './errors/region-corrupt-error'
export { RegionOwnerError } from './errors/region-owner-error'
export { SharedMemoryError } from './errors/shared-memory-error'
export { MissingPeerDependencyError } from './errors/missing-peer-dependency-error'

// Signals and clocks
export { cpuUsage, eventLoopUtilization, eventLoopDelay, eventLoopDelayRaw, eventLoopDelayMin } from './signals/signals'
export { loadInfo, configureSampler } from './signals/sampler-control'
export type { LoadInfo, SamplerOptions } from './signals/sampler-control'
export { coarseNow, preciseNow } from './signals/clock'
export type { Clock } from './signals/clock'

// Shared state
export { SharedRegion, DEFAULT_MEMBER_CAPACITY } from './shared/shared-region'
export type { NativeMember } from './native/native-types'
export { RegionLayout } from './shared/region-layout'
export type { WindowPlacement, LanePlacement } from './shared/region-layout'
export { RollingWindow } from './shared/rolling-window'
export type { BucketTotals } from './shared/rolling-window'
export { LaneCounter } from './shared/lane-counter'
export { AtomicCounter } from './shared/atomic-counter'
export { listRegions, removeRegion, removeStaleRegions } from './shared/regions'
export { defaultNamespace, NAMESPACE_ENV, splitRegionName } from './shared/namespace'
export type { SharingOptions } from './shared/sharing-options'

// Keyed collections: one bounded pool of per-key components, one eviction rule
export { KeyedPool } from './pool/keyed-pool'
export type { KeyedFactory, KeyedPoolOptions, KeyedPoolStats, PoolMember } from './pool/keyed-pool'
export type { KeyedOptions } from './pool/keyed-options'

// Admission: shed codes, execution
export { Shed, shedReason } from './shed/shed'
export type { ShedCode, ShedReason } from './shed/shed'
export type { ExecuteOptions, GuardedFunction } from './execution/run-guarded'

// BBR adaptive limiter
export { BbrLimiter } from './bbr/bbr-limiter'
export type { BbrLimiterStats, PriorityExecuteOptions } from './bbr/bbr-limiter'
export type { PriorityCounts } from './bbr/bbr-layout'
export type { BbrLimiterOptions, BbrLimiterRule, LoadSignal } from './bbr/bbr-options'
export type { FairnessOptions } from './policies/fair-share'
export type { AdmissionQueueStats } from './policies/admission-queue'
export { Priority } from './bbr/priority'
export type { PriorityName } from './bbr/priority'
export type { QueueDelayOptions } from './bbr/queue-delay-controller'
export type { LatencyOptions } from './adaptive/latency-options'
export type { LatencyStats } from './adaptive/latency-stats'

// Adaptive bulkheads (one per upstream: the outbound guards make them)
export { AdaptiveBulkhead } from './bulkhead/adaptive-bulkhead'
export type { AdaptiveBulkheadStats } from './bulkhead/adaptive-bulkhead'
export type { AdaptiveBulkheadOptions } from './bulkhead/bulkhead-options'
export { BulkheadPool } from './bulkhead/bulkhead-pool'
export type { BulkheadPoolOptions, BulkheadPoolStats } from './bulkhead/bulkhead-pool'
export { BulkheadRejectedError } from './errors/bulkhead-rejected-error'
export { OverloadError } from './errors/overload-error'
export type { Disposable } from './events/disposable'
export type { Event } from './events/event-source'

// Breakers, fallbacks and retry budgets
export type { Breaker, BreakerState } from './breakers/breaker'
export { SreBreaker } from './breakers/sre-breaker'
export type { SreBreakerOptions, SreBreakerRule, SreBreakerState, SreBreakerStats } from './breakers/sre-breaker'
export { CircuitBreaker } from './breakers/circuit-breaker'
export type {
  CircuitBreakerOptions,
  CircuitBreakerRule,
  CircuitBreakerStats,
  CircuitCommonOptions,
  CircuitErrorCountOptions,
  CircuitErrorRatioOptions,
  CircuitSlowCallRatioOptions,
  CircuitStateChange,
  CircuitStrategy,
} from './breakers/circuit-breaker-options'
export { BreakerGroup } from './breakers/breaker-group'
export type { BreakerFactory, BreakerGroupOptions, BreakerGroupStats } from './breakers/breaker-group'
export { BreakerOpenError } from './errors/breaker-open-error'
export { FallbackChainError } from './errors/fallback-chain-error'
export { withFallbacks } from './resilience/fallback'
export type { FallbackStep } from './resilience/fallback'
export { RetryBudget } from './resilience/retry-budget'
export type { RetryBudgetOptions, RetryBudgetStats } from './resilience/retry-budget'
export { retry } from './resilience/retry'
export type { RetryOptions } from './resilience/retry'
export { fullJitterDelay } from './resilience/backoff'

// Hot keys
export { HeavyKeeper } from './hotkeys/heavy-keeper'
export type { HeavyKeeperStats, TopKItem } from './hotkeys/heavy-keeper'
export type { HeavyKeeperOptions } from './hotkeys/heavy-keeper-options'
export { HotKeyCache } from './hotkeys/hot-key-cache'
export type { HotKeyCacheOptions, HotKeyCacheStats } from './hotkeys/hot-key-cache'
export type { CacheRule, KeyRule, PatternRule } from './hotkeys/cache-rules'

// Rate limiters and subsetting
export { TokenBucket } from './ratelimit/token-bucket'
export type { TokenBucketOptions, TokenBucketRule, TokenBucketStats } from './ratelimit/token-bucket'
export type { FlatRule, RuleStats } from './rules/live-rules'
export { SlidingWindowLimiter } from './ratelimit/sliding-window-limiter'
export type {
  SlidingWindowLimiterOptions,
  SlidingWindowLimiterRule,
  SlidingWindowLimiterStats,
} from './ratelimit/sliding-window-limiter'
export { KeyedLimiter } from './ratelimit/keyed-limiter'
export { HotParameterLimiter } from './policies/hot-parameter-limiter'
export type {
  HotParameterLimiterOptions,
  HotParameterLimiterStats,
  HotValueRule,
} from './policies/hot-parameter-limiter'
export { KeyConcurrencyLimiter } from './policies/key-concurrency-limiter'
export type {
  KeyConcurrencyLimiterOptions,
  KeyConcurrencyLimiterRule,
  KeyConcurrencyLimiterStats,
  KeyExecuteOptions,
} from './policies/key-concurrency-limiter'
export type {
  HeavyKey,
  KeyedLimiterOptions,
  KeyedLimiterRule,
  KeyedLimiterStats,
  KeyedLimiterTableOptions,
  KeyedTableStats,
} from './ratelimit/keyed-limiter'
export type { Limiter } from './ratelimit/limiter'
export { subset } from './subset/subset'
export { ConsistentHash } from './subset/consistent-hash'
export type { ConsistentHashOptions } from './subset/consistent-hash'

// Operator switches: force shedding or fallbacks for a component, host-wide (docs/guide/degrade.md)
export { Switchboard } from './switches/switchboard'
export type { SwitchboardOptions, SwitchMode, SwitchState, SwitchTarget } from './switches/switchboard'

// Framework integrations, the Redis tier, the exporters and the read-only view of the host are subpaths, loaded
// only by those who import them (docs/vocabulary.md, "Module layout"): 'bulwark/http', 'bulwark/express',
// 'bulwark/fastify', 'bulwark/koa', 'bulwark/grpc', 'bulwark/undici', 'bulwark/redis', 'bulwark/prometheus',
// 'bulwark/opentelemetry', 'bulwark/top'.

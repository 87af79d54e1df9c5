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
  isRegionCorruptError,
  isRegionMismatchError,
  isSharedMemoryError,
} from './errors/error-guards'
export type { BulwarkErrorCode, BulwarkErrorCodes } from './errors/error-guards'
export { AbortedError } from './errors/aborted-error'
export { InvalidOptionError } from './errors/invalid-option-error'
export { InvalidArgumentError } from './errors/invalid-argument-error'
export { NativeLoadError } from './errors/native-load-error'
export { RegionMismatchError } from './errors/region-mismatch-error'
export { RegionCorruptError } from './errors/region-corrupt-error'
export { RegionOwnerError } from './errors/region-owner-error'
export { SharedMemoryError } from './errors/shared-memory-error'

// Signals and clocks
export {
  cpuUsage,
  eventLoopUtilization,
  eventLoopDelay,
  eventLoopDelayRaw,
  eventLoopDelayMin,
  loadInfo,
  configureSampler,
} from './signals/signals'
export type { LoadInfo, SamplerOptions } from './signals/signals'
export { SAMPLER_DEFAULTS } from './signals/sampler-defaults'
export { coarseNow, preciseNow } from './signals/clock'
export type { Clock } from './signals/clock'

// Shared state
export { SharedRegion, DEFAULT_MEMBER_CAPACITY } from './shared/shared-region'
export { RegionLayout } from './shared/region-layout'
export type { WindowPlacement, LanePlacement } from './shared/region-layout'
export { RollingWindow } from './shared/rolling-window'
export type { BucketTotals } from './shared/rolling-window'
export { LaneCounter } from './shared/lane-counter'
export { AtomicCounter } from './shared/atomic-counter'
export { listRegions, removeRegion, removeStaleRegions } from './shared/regions'
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
export type { SreBreakerOptions, SreBreakerState, SreBreakerStats } from './breakers/sre-breaker'
export { CircuitBreaker } from './breakers/circuit-breaker'
export type {
  CircuitBreakerOptions,
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
export { murmur3 } from './hotkeys/murmur3'

// Rate limiters and subsetting
export { TokenBucket } from './ratelimit/token-bucket'
export type { TokenBucketOptions, TokenBucketRule, TokenBucketStats } from './ratelimit/token-bucket'
export type { RuleStats } from './rules/live-rules'
export { SlidingWindowLimiter } from './ratelimit/sliding-window-limiter'
export type { SlidingWindowLimiterOptions, SlidingWindowLimiterStats } from './ratelimit/sliding-window-limiter'
export { KeyedLimiter } from './ratelimit/keyed-limiter'
export type { KeyedLimiterOptions, KeyedLimiterStats } from './ratelimit/keyed-limiter'
export type { Limiter } from './ratelimit/limiter'
export { RedisRateLimiter } from './ratelimit/redis/redis-rate-limiter'
export type { RateLimitDecision, RedisLimiterState, RedisRateLimiterStats } from './ratelimit/redis/redis-rate-limiter'
export type {
  RedisAlgorithm,
  RedisClient,
  RedisRateLimiterOptions,
  RedisScriptClient,
} from './ratelimit/redis/redis-options'
export { subset } from './subset/subset'
export { ConsistentHash } from './subset/consistent-hash'
export type { ConsistentHashOptions } from './subset/consistent-hash'
export { fnv1a32 } from './subset/fnv1a32'

// Framework integrations (no framework is loaded at import: each adapter only touches the objects given to it)
export { InboundGuard } from './integrations/inbound-guard'
export type { InboundGuardStats, RequestAccess, ShedEvent } from './integrations/inbound-guard'
export type {
  GlobalRateLimiter,
  InboundGuardOptions,
  KeyedRateLimiter,
  RateLimitOptions,
} from './integrations/inbound-options'
export type { DeadlineOptions, DegradeOptions } from './integrations/degrade-options'
export type { Fallback, FallbackReason, FallbackResponse } from './integrations/fallback'
export { remainingDeadlineMs } from './integrations/deadline-context'
export { Switchboard } from './switches/switchboard'
export type { SwitchboardOptions, SwitchMode, SwitchState, SwitchTarget } from './switches/switchboard'
export { httpGuard } from './integrations/http'
export type { GuardedListener, NodeRequest, NodeResponse, RequestListener } from './integrations/http'
export { http2StreamGuard } from './integrations/http2-stream'
export type { GuardedStreamListener, Http2StreamRequest, StreamListener } from './integrations/http2-stream'
export { expressGuard } from './integrations/express'
export type { ExpressMiddleware, ExpressRequest } from './integrations/express'
export { fastifyGuard } from './integrations/fastify'
export type { FastifyGuardOptions, FastifyInstanceLike, FastifyRequestLike } from './integrations/fastify'
export { koaGuard } from './integrations/koa'
export type { KoaContextLike, KoaMiddleware } from './integrations/koa'
export { grpcServerGuard } from './integrations/grpc-server'
export type { GrpcCallInfo, GrpcServerGuardOptions, GrpcServerInterceptor } from './integrations/grpc-server'
export { grpcClientGuard } from './integrations/grpc-client'
export type { GrpcClientGuardOptions, GrpcClientInterceptor } from './integrations/grpc-client'
export { GrpcStatus } from './integrations/grpc-module'
export type { BreakerChoice } from './integrations/breaker-port'
export type { BulkheadChoice } from './integrations/bulkhead-port'
export { undiciGuard } from './integrations/undici-guard'
export type { UndiciGuardOptions, UndiciInterceptor } from './integrations/undici-guard'
export type { DispatchHandler } from './integrations/undici-handler-api'

// Observability: a read-only view of the host's shared regions (what `npx bulwark top` shows). The Prometheus and
// OpenTelemetry exporters are in the subpaths 'bulwark/prometheus' and 'bulwark/opentelemetry' (optional peers).
export { inspectRegions } from './top/inspect'
export type { InspectOptions } from './top/inspect'
export { HostWatcher } from './top/host-watcher'
export type {
  CircuitBreakerView,
  ComponentView,
  HostFrame,
  HotKey,
  HotKeysView,
  LimiterView,
  MemberView,
  RegionReport,
  SlidingWindowView,
  SreBreakerView,
  TokenBucketView,
} from './top/views'
export { MissingPeerDependencyError } from './errors/missing-peer-dependency-error'

// 'bulwark/core': the components a gateway starts with (BbrLimiter, the two breakers, TokenBucket), their types,
// and the errors and shed codes they answer with. The root entry exports the same classes (one instance of each):
// both entries load a component's code when it is first read (require) or used (an ES module import, through the
// stand-ins of scripts/build-ts.js; docs/guide/install.md, "Entry points and what loading costs").

// Errors: every one has a stable `code` and a type guard that works across copies of the package
export { BulwarkError } from '../errors/bulwark-error'
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
} from '../errors/error-guards'
export type { BulwarkErrorCode, BulwarkErrorCodes } from '../errors/error-guards'
export { AbortedError } from '../errors/aborted-error'
export { InvalidOptionError } from '../errors/invalid-option-error'
export { InvalidArgumentError } from '../errors/invalid-argument-error'
export { NativeLoadError } from '../errors/native-load-error'
export { RegionMismatchError } from '../errors/region-mismatch-error'
export { RegionCorruptError } from '../errors/region-corrupt-error'
export { RegionOwnerError } from '../errors/region-owner-error'
export { SharedMemoryError } from '../errors/shared-memory-error'
export { MissingPeerDependencyError } from '../errors/missing-peer-dependency-error'

// Admission: shed codes, execution, events
export { Shed, shedReason } from '../shed/shed'
export type { ShedCode, ShedReason } from '../shed/shed'
export type { ExecuteOptions, GuardedFunction } from '../execution/run-guarded'
export type { Disposable } from '../events/disposable'
export type { Event } from '../events/event-source'
export type { SharingOptions } from '../shared/sharing-options'

// BBR adaptive limiter
export { BbrLimiter } from '../bbr/bbr-limiter'
export type { BbrLimiterStats, PriorityExecuteOptions } from '../bbr/bbr-limiter'
export type { PriorityCounts } from '../bbr/bbr-layout'
export type { BbrLimiterOptions, BbrLimiterRule, LoadSignal } from '../bbr/bbr-options'
export type { FairnessOptions } from '../policies/fair-share'
export { Priority } from '../bbr/priority'
export type { PriorityName } from '../bbr/priority'
export type { QueueDelayOptions } from '../bbr/queue-delay-controller'
export type { LatencyOptions } from '../adaptive/latency-options'
export type { LatencyStats } from '../adaptive/latency-stats'
export type { FlatRule, RuleStats } from '../rules/live-rules'
export { OverloadError } from '../errors/overload-error'

// Breakers
export type { Breaker, BreakerState } from '../breakers/breaker'
export { SreBreaker } from '../breakers/sre-breaker'
export type { SreBreakerOptions, SreBreakerRule, SreBreakerState, SreBreakerStats } from '../breakers/sre-breaker'
export { CircuitBreaker } from '../breakers/circuit-breaker'
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
} from '../breakers/circuit-breaker-options'
export { BreakerOpenError } from '../errors/breaker-open-error'

// Token bucket
export { TokenBucket } from '../ratelimit/token-bucket'
export type { TokenBucketOptions, TokenBucketRule, TokenBucketStats } from '../ratelimit/token-bucket'

// 'bulwark/core': the components a gateway starts with (BbrLimiter, the two breakers, TokenBucket), their types,
// and the errors and shed codes they answer with. The root entry exports all of it too: the same classes, from the
// core chunk of the build (scripts/build-ts.mjs), so a process that loads both has one copy of each.

// Errors: every one has a stable `code` and a type guard that works across copies of the package
export { BulwarkError } from '../foundation/errors/bulwark-error'
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
} from '../foundation/errors/error-guards'
export type { BulwarkErrorCode, BulwarkErrorCodes } from '../foundation/errors/error-guards'
export { AbortedError } from '../foundation/errors/aborted-error'
export { InvalidOptionError } from '../foundation/errors/invalid-option-error'
export { InvalidArgumentError } from '../foundation/errors/invalid-argument-error'
export { NativeLoadError } from '../foundation/errors/native-load-error'
export { RegionMismatchError } from '../foundation/errors/region-mismatch-error'
export { RegionCorruptError } from '../foundation/errors/region-corrupt-error'
export { RegionOwnerError } from '../foundation/errors/region-owner-error'
export { SharedMemoryError } from '../foundation/errors/shared-memory-error'
export { MissingPeerDependencyError } from '../foundation/errors/missing-peer-dependency-error'

// Admission: shed codes, execution, events
export { Shed, shedReason } from '../foundation/errors/shed'
export type { ShedCode, ShedReason } from '../foundation/errors/shed'
export type { ExecuteOptions, GuardedFunction } from '../admission/run-guarded'
export type { Disposable } from '../foundation/common/disposable'
export type { Event } from '../foundation/common/event-source'
export type { SharingOptions } from '../foundation/regions/sharing-options'

// BBR adaptive limiter
export { BbrLimiter } from '../components/bbr/bbr-limiter'
export type { BbrLimiterStats, PriorityExecuteOptions } from '../components/bbr/bbr-limiter'
export type { PriorityCounts } from '../components/bbr/bbr-layout'
export type { BbrLimiterOptions, BbrLimiterRule } from '../components/bbr/bbr-options'
export type { LoadSignal } from '../admission/limits/load-signal'
export type { MemoryOptions, MemorySignal } from '../components/bbr/memory-options'
export type { MemoryStats } from '../components/bbr/memory-check'
export type { FairnessOptions } from '../admission/queue/fair-share'
export { Priority } from '../admission/priority'
export type { PriorityName } from '../admission/priority'
export type { QueueDelayOptions } from '../admission/limits/queue-delay-controller'
export type { LatencyOptions } from '../admission/limits/latency-options'
export type { LatencyStats } from '../admission/limits/latency-stats'
export type { FlatRule, RuleStats } from '../foundation/live-rules/live-rules'
export type { ShadowCount, ShadowRule, ShadowStats } from '../foundation/live-rules/shadow-tally'
export { OverloadError } from '../foundation/errors/overload-error'

// Breakers
export type { Breaker, BreakerState } from '../components/breakers/breaker'
export { SreBreaker } from '../components/breakers/sre-breaker'
export type {
  SreBreakerOptions,
  SreBreakerRule,
  SreBreakerState,
  SreBreakerStats,
} from '../components/breakers/sre-breaker'
export { CircuitBreaker } from '../components/breakers/circuit-breaker'
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
} from '../components/breakers/circuit-breaker-options'
export { BreakerOpenError } from '../foundation/errors/breaker-open-error'

// Token bucket
export { TokenBucket } from '../components/ratelimit/token-bucket'
export type { TokenBucketOptions, TokenBucketRule, TokenBucketStats } from '../components/ratelimit/token-bucket'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'

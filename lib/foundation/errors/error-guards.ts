// Type guards for bulwark's errors. They read the error's brand and `code`, not its class, so that they also
// recognise errors made by another copy of the package (where instanceof says false).
import type { AbortedError } from './aborted-error'
import type { BreakerOpenError } from './breaker-open-error'
import type { BulkheadRejectedError } from './bulkhead-rejected-error'
import { type BulwarkError, hasBulwarkBrand } from './bulwark-error'
import type { FallbackChainError } from './fallback-chain-error'
import type { InvalidArgumentError } from './invalid-argument-error'
import type { InvalidOptionError } from './invalid-option-error'
import type { MissingPeerDependencyError } from './missing-peer-dependency-error'
import type { NativeLoadError } from './native-load-error'
import type { OverloadError } from './overload-error'
import type { RedisError } from './redis-error'
import type { RegionCorruptError } from './region-corrupt-error'
import type { RegionMismatchError } from './region-mismatch-error'
import type { RegionOwnerError } from './region-owner-error'
import type { SharedMemoryError } from './shared-memory-error'

/** Every stable error code, with the class that carries it. */
export interface BulwarkErrorCodes {
  ERR_BULWARK_ABORTED: AbortedError
  ERR_BULWARK_BREAKER_OPEN: BreakerOpenError
  ERR_BULWARK_BULKHEAD_REJECTED: BulkheadRejectedError
  ERR_BULWARK_FALLBACKS_FAILED: FallbackChainError
  ERR_BULWARK_INVALID_ARGUMENT: InvalidArgumentError
  ERR_BULWARK_INVALID_OPTION: InvalidOptionError
  ERR_BULWARK_MISSING_PEER: MissingPeerDependencyError
  ERR_BULWARK_NATIVE_LOAD: NativeLoadError
  ERR_BULWARK_OVERLOAD: OverloadError
  ERR_BULWARK_REDIS: RedisError
  ERR_BULWARK_REGION_BUSY: SharedMemoryError
  ERR_BULWARK_REGION_CORRUPT: RegionCorruptError
  ERR_BULWARK_REGION_FULL: SharedMemoryError
  ERR_BULWARK_REGION_MISMATCH: RegionMismatchError
  ERR_BULWARK_REGION_OWNER: RegionOwnerError
  ERR_BULWARK_SYSTEM: SharedMemoryError
}

export type BulwarkErrorCode = keyof BulwarkErrorCodes

/** Whether `error` is one of bulwark's errors; with `code`, one with that code. */
export function isBulwarkError(error: unknown): error is BulwarkError
export function isBulwarkError<C extends BulwarkErrorCode>(error: unknown, code: C): error is BulwarkErrorCodes[C]
export function isBulwarkError(error: unknown, code?: string): boolean {
  return hasBulwarkBrand(error, code)
}

export const isOverloadError = (error: unknown): error is OverloadError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_OVERLOAD')
export const isBreakerOpenError = (error: unknown): error is BreakerOpenError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_BREAKER_OPEN')
export const isBulkheadRejectedError = (error: unknown): error is BulkheadRejectedError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_BULKHEAD_REJECTED')
export const isAbortedError = (error: unknown): error is AbortedError => hasBulwarkBrand(error, 'ERR_BULWARK_ABORTED')
export const isInvalidOptionError = (error: unknown): error is InvalidOptionError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_INVALID_OPTION')
export const isInvalidArgumentError = (error: unknown): error is InvalidArgumentError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_INVALID_ARGUMENT')
export const isFallbackChainError = (error: unknown): error is FallbackChainError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_FALLBACKS_FAILED')
export const isMissingPeerDependencyError = (error: unknown): error is MissingPeerDependencyError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_MISSING_PEER')
export const isNativeLoadError = (error: unknown): error is NativeLoadError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_NATIVE_LOAD')
export const isRegionMismatchError = (error: unknown): error is RegionMismatchError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_REGION_MISMATCH')
export const isRegionCorruptError = (error: unknown): error is RegionCorruptError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_REGION_CORRUPT')
/** Shared memory could not be attached: any of ERR_BULWARK_REGION_BUSY, ERR_BULWARK_REGION_FULL, ERR_BULWARK_SYSTEM. */
export const isSharedMemoryError = (error: unknown): error is SharedMemoryError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_REGION_BUSY') ||
  hasBulwarkBrand(error, 'ERR_BULWARK_REGION_FULL') ||
  hasBulwarkBrand(error, 'ERR_BULWARK_SYSTEM')
export const isRegionOwnerError = (error: unknown): error is RegionOwnerError =>
  hasBulwarkBrand(error, 'ERR_BULWARK_REGION_OWNER')
export const isRedisError = (error: unknown): error is RedisError => hasBulwarkBrand(error, 'ERR_BULWARK_REDIS')

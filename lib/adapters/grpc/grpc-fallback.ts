import type { FallbackReason } from '../../guards/inbound/fallback'
import { GrpcStatus } from './grpc-module'

/** What the guard sees of an incoming call (and what `priority`, `rateLimit.key` and `fallback` receive). */
export interface GrpcCallInfo {
  /** The method's path, `/package.Service/Method`. */
  method: string
  /** The call's request metadata (grpc-js `Metadata`). */
  metadata: { get(key: string): unknown[] }
  /** The client's address, without the port. */
  address: string | undefined
  /** Milliseconds left before the call's deadline (`grpc-timeout`) when it arrived; NaN without one. */
  remainingMs: number
}

/** A degraded end of a gRPC call: its status code (default UNAVAILABLE), details and trailers. */
export interface GrpcFallbackStatus {
  code?: number
  details?: string
  trailers?: Record<string, string>
}

/** Returns the status a refused, timed-out or failed call ends with, or undefined for the plain one. */
export type GrpcFallback = (call: GrpcCallInfo, reason: FallbackReason) => GrpcFallbackStatus | undefined

export interface GrpcStatusAnswer {
  code: number
  details: string
  trailers: Record<string, string>
}

// What grpc-js's Metadata.set accepts for a text value: a key of lower-case letters, digits, '_', '.' and '-' that
// does not end in -bin (binary values are Buffers), and a value of printable ASCII. Checked here, so that it never
// throws where the answer is written (from a timer, say).
const TRAILER_KEY = /^[0-9a-z_.-]+$/
const TRAILER_VALUE = /^[ -~]*$/

/**
 * Checks a gRPC fallback's answer (undefined stays undefined); anything else throws, for the plain answer, and so
 * do trailers grpc-js would refuse to send.
 */
export function checkGrpcAnswer(value: unknown): GrpcStatusAnswer | undefined {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object') throw new TypeError('a gRPC fallback answer must be an object')
  const a = value as GrpcFallbackStatus
  const code = a.code ?? GrpcStatus.UNAVAILABLE
  if (!Number.isInteger(code) || code < 0 || code > 16) throw new RangeError(`bad gRPC status ${code}`)
  const trailers = { ...a.trailers }
  for (const [key, v] of Object.entries(trailers)) {
    if (!TRAILER_KEY.test(key) || key.endsWith('-bin')) throw new TypeError(`bad trailer key ${key}`)
    if (typeof v !== 'string' || !TRAILER_VALUE.test(v)) throw new TypeError(`trailer ${key}: printable ASCII`)
  }
  return { code, details: String(a.details ?? ''), trailers }
}

/** The end of a call one of the application's functions (priority, a key, a trust predicate) threw for. */
export const CALLBACK_FAILED_STATUS: GrpcStatusAnswer = {
  code: GrpcStatus.INTERNAL,
  details: 'internal error',
  trailers: {},
}

/** The plain end of a call the fallback did not answer: UNAVAILABLE, saying why. */
export function plainGrpcAnswer(reason: FallbackReason, failed: boolean): GrpcStatusAnswer {
  const details = failed ? 'unavailable (the fallback failed)' : reason === 'timeout' ? 'timed out' : 'unavailable'
  return { code: GrpcStatus.UNAVAILABLE, details, trailers: {} }
}

import { isBreakerOpenError } from '../../foundation/errors/error-guards'

/**
 * Why a request gets a fallback answer instead of its handler's (docs/guide/degrade.md): the limiter shed it
 * (`overload`: load, deadline, an operator's shed switch), the rate limit refused it, a breaker it met was open
 * (the handler threw BreakerOpenError), its handler did not answer within `timeout`, or its handler threw. An
 * operator's fallback switch asks with `forced`.
 */
export type FallbackReason = 'overload' | 'rate-limit' | 'breaker-open' | 'timeout' | 'error' | 'forced'

/** A degraded answer: status (default 200), headers, and a body (a string, bytes, or an object sent as JSON). */
export interface FallbackResponse {
  status?: number
  headers?: Record<string, string | number | readonly string[]>
  body?: string | Uint8Array | object
}

/** Returns the degraded answer for a request, or undefined for the guard's plain answer (503, 429). */
export type Fallback<Req> = (request: Req, reason: FallbackReason) => FallbackResponse | undefined

/** A fallback answer checked and made ready to write. */
export interface DegradedAnswer {
  status: number
  headers: Record<string, string | number | readonly string[]>
  body: string | Uint8Array
}

const JSON_TYPE = 'application/json; charset=utf-8'

/** The fallback reason of an error a handler threw (a BreakerOpenError, or a fetch TypeError caused by one). */
export function errorReason(error: unknown): FallbackReason {
  const cause = (error as { cause?: unknown } | null | undefined)?.cause
  return isBreakerOpenError(error) || isBreakerOpenError(cause) ? 'breaker-open' : 'error'
}

/**
 * Checks what a fallback returned: undefined stays undefined (the plain answer); anything that is not a valid
 * answer throws, so that the caller answers plainly (a broken fallback never breaks the response).
 */
export function checkFallbackResponse(value: unknown): DegradedAnswer | undefined {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object') throw new TypeError('a fallback answer must be an object')
  const r = value as FallbackResponse
  const status = r.status ?? 200
  if (!Number.isInteger(status) || status < 200 || status > 599) throw new RangeError(`bad status ${status}`)
  const headers: DegradedAnswer['headers'] = { ...r.headers }
  let body: string | Uint8Array
  if (r.body === undefined || r.body === null) body = ''
  else if (typeof r.body === 'string' || r.body instanceof Uint8Array) body = r.body
  else {
    body = JSON.stringify(r.body)
    if (!hasHeader(headers, 'content-type')) headers['content-type'] = JSON_TYPE
  }
  return { status, headers, body }
}

function hasHeader(headers: object, name: string): boolean {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return true
  return false
}

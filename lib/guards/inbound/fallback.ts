// Loaded at the first fallback answer: a gRPC-only process never needs node:http's checks.
import { validateHeaderName, validateHeaderValue } from 'http'

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

// The connection's own headers, which HTTP/2 refuses (RFC 9113, 8.2.2) and an answer has no business setting: an
// answer that names one is refused on every transport, so that a fallback behaves the same over HTTP/1.1 and 2.
const CONNECTION_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
])

/** The fallback reason of an error a handler threw (a BreakerOpenError, or a fetch TypeError caused by one). */
export function errorReason(error: unknown): FallbackReason {
  const cause = (error as { cause?: unknown } | null | undefined)?.cause
  return isBreakerOpenError(error) || isBreakerOpenError(cause) ? 'breaker-open' : 'error'
}

/**
 * Checks what a fallback returned: undefined stays undefined (the plain answer); anything that is not a valid
 * answer throws, so that the caller answers plainly (a broken fallback never breaks the response). Its headers must
 * be ones Node writes on HTTP/1.1 and HTTP/2 alike; a Content-Length is dropped, the body sets it.
 */
export function checkFallbackResponse(value: unknown): DegradedAnswer | undefined {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object') throw new TypeError('a fallback answer must be an object')
  const r = value as FallbackResponse
  const status = r.status ?? 200
  if (!Number.isInteger(status) || status < 200 || status > 599) throw new RangeError(`bad status ${status}`)
  const headers = checkHeaders(r.headers)
  let body: string | Uint8Array
  if (r.body === undefined || r.body === null) body = ''
  else if (typeof r.body === 'string' || r.body instanceof Uint8Array) body = r.body
  else {
    body = JSON.stringify(r.body)
    if (!hasHeader(headers, 'content-type')) headers['content-type'] = JSON_TYPE
  }
  return { status, headers, body }
}

/** A copy of an answer's headers that Node will write, else a throw naming the first it would refuse. */
function checkHeaders(given: unknown): DegradedAnswer['headers'] {
  const headers: DegradedAnswer['headers'] = {}
  if (given === undefined) return headers
  if (given === null || typeof given !== 'object') throw new TypeError('headers must be an object')
  for (const [name, value] of Object.entries(given)) {
    validateHeaderName(name)
    const lower = name.toLowerCase()
    if (CONNECTION_HEADERS.has(lower)) throw new TypeError(`${name} is the connection's header, not an answer's`)
    if (lower === 'content-length') continue
    const values: unknown[] = Array.isArray(value) ? value : [value]
    for (const v of values) {
      if (typeof v !== 'string' && typeof v !== 'number') throw new TypeError(`header ${name}: a string or a number`)
      validateHeaderValue(name, String(v))
    }
    headers[name] = value as string | number | readonly string[]
  }
  return headers
}

function hasHeader(headers: object, name: string): boolean {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return true
  return false
}

// What the inbound guard computes from a request's parts: its class, its rate-limit key, its deadline.
import type { ResolvedDeadline } from './degrade-options'
import type { RequestAccess } from './inbound-guard-types'
import { MAX_RETRY_AFTER } from './inbound-options'

// The default rate-limit key (an IPv6 client's /64): its own file, tested on its own.
export { addressKey } from './address-key'

/** A header value (or a computed priority) to a class index (0 is the highest); anything unknown is `fallback`. */
export function classOf(value: unknown, fallback: number): number {
  switch (value) {
    case 'critical':
    case 0:
      return 0
    case 'high':
    case 1:
      return 1
    case 'normal':
    case 2:
      return 2
    case 'low':
    case 3:
      return 3
    default:
      return fallback
  }
}

/** A header of remaining milliseconds: a finite number >= 0, else NaN (ignored). */
function remainingFromHeader(value: unknown): number {
  if (typeof value !== 'string' || value === '') return NaN
  const ms = Number(value)
  return ms >= 0 && ms < Infinity ? ms : NaN
}

/** `seconds` plus a jitter: a whole number of seconds in [seconds, seconds + jitter], at most a day. */
export function jittered(seconds: number, jitter: number, random: () => number): number {
  if (jitter === 0) return seconds
  const r = random()
  const s = r >= 0 && r < 1 ? seconds + Math.floor(r * (jitter + 1)) : seconds
  return s < MAX_RETRY_AFTER ? s : MAX_RETRY_AFTER
}

export function retrySeconds(ms: number): number {
  if (!(ms < MAX_RETRY_AFTER * 1000)) return MAX_RETRY_AFTER // also NaN and Infinity
  const s = Math.ceil(ms / 1000)
  return s < 1 ? 1 : s
}

/**
 * The reader of a request's remaining milliseconds (NaN: none), or undefined when deadlines are off: the
 * transport's own (gRPC), or the named header for requests `trust` accepts (docs/guide/degrade.md, "Deadlines").
 */
export function deadlineReader<Req>(
  d: ResolvedDeadline<Req> | undefined,
  access: RequestAccess<Req>,
): ((request: Req) => number) | undefined {
  if (d === undefined) return undefined
  if (d.header === undefined) return access.remaining
  const header = d.header
  const trust = d.trust as (request: Req) => boolean
  if (d.absolute)
    return (request) =>
      trust(request) === true ? remainingFromHeader(access.header(request, header)) - Date.now() : NaN
  return (request) => (trust(request) === true ? remainingFromHeader(access.header(request, header)) : NaN)
}

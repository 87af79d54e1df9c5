import type { UpstreamLimits } from '../../components/ratelimit/quota-permits'

/** Reads one response header by its lower-case name (the first value when it repeats). */
export type HeaderLookup = (name: string) => string | undefined

// What an upstream's answer says of its limits (docs/guide/integrations.md, "Quotas per origin"), from the headers
// the providers document:
// - Retry-After (RFC 9110: seconds or an HTTP date) and retry-after-ms, on a 429 or a 503;
// - OpenAI: x-ratelimit-remaining-requests, x-ratelimit-remaining-tokens (their reset headers give the time until
//   the bucket is full again, not until the next request: not a pause);
// - Anthropic: anthropic-ratelimit-requests-remaining, anthropic-ratelimit-tokens-remaining and the input-/output-
//   tokens ones (the lowest counts);
// - the IETF drafts (draft-ietf-httpapi-ratelimit-headers): RateLimit-Remaining with RateLimit-Reset (seconds), and
//   the later `RateLimit: "policy";r=<remaining>;t=<seconds>`; GitHub and others: X-RateLimit-Remaining with
//   X-RateLimit-Reset (seconds, or a Unix time). These count requests in a fixed window: when none remains, the
//   reset is a pause.
const TOKEN_HEADERS = [
  'x-ratelimit-remaining-tokens',
  'anthropic-ratelimit-tokens-remaining',
  'anthropic-ratelimit-input-tokens-remaining',
  'anthropic-ratelimit-output-tokens-remaining',
]

/** The limits a response's headers state, or undefined when it states none. `nowMs` is Date.now(). */
export function upstreamLimits(statusCode: number, header: HeaderLookup, nowMs: number): UpstreamLimits | undefined {
  let limits: UpstreamLimits | undefined
  const requests =
    count(header('x-ratelimit-remaining-requests')) ?? count(header('anthropic-ratelimit-requests-remaining'))
  if (requests !== undefined) (limits ??= {}).requests = requests
  let cost: number | undefined
  for (const name of TOKEN_HEADERS) {
    const n = count(header(name))
    if (n !== undefined && (cost === undefined || n < cost)) cost = n
  }
  if (cost !== undefined) (limits ??= {}).cost = cost
  const window = fixedWindow(header, nowMs)
  if (window !== undefined) {
    limits ??= {}
    if (limits.requests === undefined) limits.requests = window.remaining
    if (window.remaining === 0 && window.resetMs > 0) limits.pauseMs = window.resetMs
  }
  if (statusCode === 429 || statusCode === 503) {
    const wait = retryAfterMs(header, nowMs)
    if (wait !== undefined) {
      limits ??= {}
      limits.pauseMs = Math.max(limits.pauseMs ?? 0, wait)
    }
  }
  return limits
}

/** Retry-After in ms: retry-after-ms, else Retry-After as seconds or an HTTP date. */
export function retryAfterMs(header: HeaderLookup, nowMs: number): number | undefined {
  const ms = Number(header('retry-after-ms'))
  if (ms >= 0 && ms < Infinity) return ms
  const value = header('retry-after')
  if (value === undefined) return undefined
  const seconds = Number(value)
  if (value.trim() !== '' && seconds >= 0 && seconds < Infinity) return seconds * 1000
  const date = Date.parse(value)
  return date === date ? Math.max(0, date - nowMs) : undefined
}

/** A fixed window's remaining requests and the ms until it resets, from the IETF or X-RateLimit headers. */
function fixedWindow(header: HeaderLookup, nowMs: number): { remaining: number; resetMs: number } | undefined {
  const structured = header('ratelimit')
  if (structured !== undefined) {
    const r = /(?:^|;)\s*r=(\d+)/.exec(structured)
    const t = /(?:^|;)\s*t=(\d+)/.exec(structured)
    if (r !== null) return { remaining: Number(r[1]), resetMs: t === null ? 0 : Number(t[1]) * 1000 }
  }
  for (const prefix of ['ratelimit-', 'x-ratelimit-']) {
    const remaining = count(header(`${prefix}remaining`))
    if (remaining === undefined) continue
    const reset = Number(header(`${prefix}reset`))
    // A reset far larger than any window is a Unix time in seconds (GitHub's), else seconds from now.
    const resetMs = !(reset >= 0 && reset < Infinity)
      ? 0
      : reset > 1e9
        ? Math.max(0, reset * 1000 - nowMs)
        : reset * 1000
    return { remaining, resetMs }
  }
  return undefined
}

function count(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  return value.trim() !== '' && n >= 0 && n < Infinity ? n : undefined
}

/**
 * A lookup over the headers undici hands a handler: an object of lower-case names (the controller API) or a flat
 * array of names and values, Buffers or strings (the callback API).
 */
export function headerLookup(headers: unknown): HeaderLookup {
  if (Array.isArray(headers)) {
    return (name) => {
      for (let i = 0; i + 1 < headers.length; i += 2) {
        if (String(headers[i]).toLowerCase() === name) return String(headers[i + 1])
      }
      return undefined
    }
  }
  if (headers !== null && typeof headers === 'object') {
    const record = headers as Record<string, unknown>
    return (name) => {
      const value = record[name]
      if (value === undefined) return undefined
      return Array.isArray(value) ? String(value[0]) : String(value)
    }
  }
  return () => undefined
}

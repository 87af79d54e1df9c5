// The rate limit's header fields (docs/guide/gateway.md, "Rate-limit headers"): the IETF `RateLimit-Policy` and
// `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-10 (quota `q` over window `w` seconds; remaining `r`,
// seconds `t` until more quota), or the older `X-RateLimit-Limit / -Remaining / -Reset` trio. Computed only for a
// guard that asks for them; the strings are made once per value and kept (bounded).
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'

const TABLE = 1 // a KeyedLimiter of the table form: rate, burst, available(key)
const FACTORY = 2 // a KeyedLimiter of the factory form: its key's limiter, by its shape
const BUCKET = 3 // rate, burst, available()
const WINDOW = 4 // limit, window (ms), available(), retryAfterMs(n)

const MAX_CACHED = 4096

interface Shaped {
  rate?: unknown
  burst?: unknown
  limit?: unknown
  window?: unknown
  idleTimeout?: unknown
  available?: (key?: string) => number
  retryAfterMs?: (n?: number) => number
  get?: (key: string) => unknown
}

function shapeOf(limiter: Shaped | undefined): number {
  if (limiter === null || typeof limiter !== 'object' || typeof limiter.available !== 'function') return 0
  if (typeof limiter.get === 'function' && typeof limiter.idleTimeout === 'number')
    return limiter.idleTimeout === Infinity ? TABLE : FACTORY
  if (typeof limiter.rate === 'number' && typeof limiter.burst === 'number') return BUCKET
  if (typeof limiter.limit === 'number' && typeof limiter.window === 'number' && limiter.retryAfterMs) return WINDOW
  return 0
}

/**
 * Validates a rate limit's `headers` option: 'ietf' (true), 'legacy', or undefined (off). A limiter whose policy
 * the fields cannot tell (one of your own) is refused with the option named.
 */
export function checkHeaders(limiter: unknown, value: unknown, field: string): 'ietf' | 'legacy' | undefined {
  if (value === undefined || value === false) return undefined
  if (value !== true && value !== 'legacy') throw new InvalidOptionError(field, value, "true, 'legacy' or false")
  if (shapeOf(limiter as Shaped) === 0)
    throw new InvalidOptionError(field, value, 'given with a TokenBucket, a SlidingWindowLimiter or a KeyedLimiter')
  return value === true ? 'ietf' : 'legacy'
}

/** A Structured Fields string item (RFC 9651): the policy's name in quotes. */
function sfString(name: string): string {
  return `"${name.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, '?')}"`
}

/** The header fields of one rate limit, for the key just decided. */
export class RateLimitHeaders {
  /** [name, value, name, value...] of the last decision (refilled: copy it before the next decision). */
  declare readonly values: string[]
  declare private readonly shape: number
  declare private readonly limiter: Shaped
  declare private readonly legacy: boolean
  declare private readonly item: string
  // The last policy's quota and window, and its field value.
  private q = -1
  private w = -1
  private policyText = ''
  private readonly limitTexts = new Map<number, string>()
  private readonly numbers: string[] = []

  constructor(limiter: unknown, mode: 'ietf' | 'legacy', policyName: string) {
    this.limiter = limiter as Shaped
    this.shape = shapeOf(this.limiter)
    this.legacy = mode === 'legacy'
    this.item = sfString(policyName)
    this.values = this.legacy
      ? ['x-ratelimit-limit', '', 'x-ratelimit-remaining', '', 'x-ratelimit-reset', '']
      : ['ratelimit-policy', '', 'ratelimit', '']
  }

  /** The fields for `key` (undefined for a limiter of one limit) after its decision, or undefined if untold. */
  describe(key: string | undefined): string[] | undefined {
    let target = this.limiter
    let shape = this.shape
    let keyed = shape === TABLE
    if (shape === FACTORY) {
      target = (this.limiter.get as (key: string) => Shaped)(key as string)
      shape = shapeOf(target)
      keyed = false
    }
    let q: number
    let w: number
    let r: number
    let t: number
    if (shape === BUCKET || shape === TABLE) {
      const rate = target.rate as number
      const burst = target.burst as number
      const a = keyed
        ? (target.available as (key: string) => number)(key as string)
        : (target.available as () => number)()
      q = Math.floor(burst)
      w = Math.max(1, Math.ceil(burst / rate))
      r = Math.min(q, Math.max(0, Math.floor(a)))
      t = r >= q ? 0 : Math.max(1, Math.ceil((r + 1 - a) / rate))
    } else if (shape === WINDOW) {
      q = Math.floor(target.limit as number)
      w = Math.max(1, Math.ceil((target.window as number) / 1000))
      r = Math.min(q, Math.max(0, Math.floor((target.available as () => number)())))
      t = r >= q ? 0 : Math.max(1, Math.ceil((target.retryAfterMs as (n: number) => number)(r + 1) / 1000))
    } else return undefined
    if (!(t < 86_400)) t = 86_400 // a day at most, as Retry-After
    return this.fill(q, w, r, t)
  }

  private fill(q: number, w: number, r: number, t: number): string[] {
    const v = this.values
    if (this.legacy) {
      v[1] = this.number(q)
      v[3] = this.number(r)
      v[5] = this.number(t)
      return v
    }
    if (q !== this.q || w !== this.w) {
      this.q = q
      this.w = w
      this.policyText = `${this.item};q=${q};w=${w}`
      this.limitTexts.clear()
    }
    v[1] = this.policyText
    const id = r * 86_401 + t
    let text = this.limitTexts.get(id)
    if (text === undefined) {
      text = `${this.item};r=${r};t=${t}`
      if (this.limitTexts.size < MAX_CACHED) this.limitTexts.set(id, text)
    }
    v[3] = text
    return v
  }

  private number(n: number): string {
    if (n < MAX_CACHED) return this.numbers[n] ?? (this.numbers[n] = String(n))
    return String(n)
  }
}

/** Sets header fields ([name, value, ...]) on a response that has not started (node:http, Express, HTTP/2 compat). */
export function setFields(res: { setHeader(name: string, value: string): unknown }, fields: readonly string[]): void {
  for (let i = 0; i < fields.length; i += 2) res.setHeader(fields[i], fields[i + 1])
}

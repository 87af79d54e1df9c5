import type { BbrLimiter, BbrLimiterStats } from '../bbr/bbr-limiter'
import { PRIORITY_NAMES, type PriorityName } from '../bbr/priority'
import { type Event, EventSource } from '../events/event-source'
import { Shed, shedReason, type ShedReason } from '../shed/shed'
import {
  type GlobalRateLimiter,
  type InboundGuardOptions,
  type KeyedRateLimiter,
  resolveInboundOptions,
} from './inbound-options'

export interface ShedEvent {
  reason: ShedReason
  priority: PriorityName
  /** Seconds the answer asks the client to wait. */
  retryAfter: number
}

export interface InboundGuardStats {
  /** Requests answered 429 by the rate limit. */
  rateLimited: number
  /** The adaptive limiter's stats (undefined without one). */
  limiter: BbrLimiterStats | undefined
}

/** How the guard reads a framework's request: a header's value and the client's address. */
export interface RequestAccess<Req> {
  header(request: Req, name: string): unknown
  address(request: Req): string | undefined
}

const MODE_NONE = 0
const MODE_KEYED = 1 // get(key).tryAcquire()
const MODE_KEY_FUNCTION = 2 // tryAcquire(key)
const MODE_GLOBAL = 3 // tryAcquire()
const MAX_RETRY_AFTER = 86_400

/** A header value (or a computed priority) to a class index; anything unknown is `fallback`. */
function classOf(value: unknown, fallback: number): number {
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

/** The rate-limit key of a request without a key function: its address, or 'unknown' (never a non-string). */
function addressKey(address: unknown): string {
  return typeof address === 'string' ? address : 'unknown'
}

function retrySeconds(ms: number): number {
  if (!(ms < MAX_RETRY_AFTER * 1000)) return MAX_RETRY_AFTER // also NaN and Infinity
  const s = Math.ceil(ms / 1000)
  return s < 1 ? 1 : s
}

/**
 * The decision every inbound adapter (node:http, Express, Fastify, Koa, gRPC) makes, in one place: the rate
 * limit, then the adaptive limiter at the request's priority. `tryAcquire` returns a token >= 0 to give back with
 * `release` exactly once when the response is over, or a negative Shed code; after a shed, `retryAfter` holds
 * the seconds to announce. Neither allocates (unless a shed listener is subscribed) nor throws.
 */
export class InboundGuard<Req> {
  readonly limiter: BbrLimiter | undefined
  /** Fires on every shed request (the subscription costs an event object per shed). */
  readonly onShed: Event<ShedEvent>
  /** Seconds the last shed asks the client to wait before trying again. */
  retryAfter = 0
  private readonly sheds = new EventSource<ShedEvent>()
  private readonly access: RequestAccess<Req>
  private readonly ownsLimiter: boolean
  private readonly mode: number
  private readonly rateLimiter: KeyedRateLimiter | GlobalRateLimiter | undefined
  private readonly keyOf: ((request: Req) => string) | undefined
  private readonly header: string | undefined
  private readonly priorityOf: ((request: Req) => unknown) | undefined
  private readonly defaultPriority: number
  private readonly overloadRetryAfter: number
  private rateLimitedCount = 0

  constructor(options: InboundGuardOptions<Req> | undefined, access: RequestAccess<Req>) {
    const o = resolveInboundOptions<Req>(options)
    this.access = access
    this.limiter = o.limiter
    this.ownsLimiter = o.ownsLimiter
    this.header = o.priorityHeader
    this.priorityOf = o.priority
    this.defaultPriority = o.defaultPriority
    this.overloadRetryAfter = o.retryAfter
    this.onShed = this.sheds.event
    const rate = o.rateLimit
    this.rateLimiter = rate?.limiter
    this.keyOf = rate?.key
    if (rate === undefined) this.mode = MODE_NONE
    else if (typeof (rate.limiter as KeyedRateLimiter).get === 'function') this.mode = MODE_KEYED
    else this.mode = rate.key !== undefined ? MODE_KEY_FUNCTION : MODE_GLOBAL
  }

  /** Whether admitted requests hold a token that must be released (false when there is no adaptive limiter). */
  get tracksInFlight(): boolean {
    return this.limiter !== undefined
  }

  /** Decides one request: a token >= 0 to release when its response is over, or a Shed code (negative). */
  tryAcquire(request: Req): number {
    const p =
      this.priorityOf !== undefined
        ? classOf(this.priorityOf(request), this.defaultPriority)
        : this.header !== undefined
          ? classOf(this.access.header(request, this.header), this.defaultPriority)
          : this.defaultPriority
    if (this.mode !== MODE_NONE && !this.withinRate(request)) {
      this.rateLimitedCount++
      return this.shed(Shed.rateLimit, p)
    }
    const limiter = this.limiter
    if (limiter === undefined) return 0
    const token = limiter.tryAcquire(p)
    if (token >= 0) return token
    this.retryAfter = this.overloadRetryAfter
    return this.shed(token, p)
  }

  /**
   * Gives back an admitted request's token (a no-op without an adaptive limiter); `measured` false for a request
   * whose time says nothing about the service's (a failure, an abandoned request).
   */
  release(token: number, measured = true): void {
    if (this.limiter !== undefined) this.limiter.release(token, measured)
  }

  stats(): InboundGuardStats {
    return { rateLimited: this.rateLimitedCount, limiter: this.limiter?.stats() }
  }

  /** Closes the adaptive limiter if the guard created it from options. Idempotent. */
  close(): void {
    if (this.ownsLimiter) this.limiter?.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  private withinRate(request: Req): boolean {
    const rate = this.rateLimiter as KeyedRateLimiter & GlobalRateLimiter
    if (this.mode === MODE_GLOBAL) {
      if (rate.tryAcquire()) return true
      this.retryAfter = retrySeconds(rate.retryAfterMs())
      return false
    }
    const key = this.keyOf !== undefined ? String(this.keyOf(request)) : addressKey(this.access.address(request))
    if (this.mode === MODE_KEYED) {
      const own = (rate.get as NonNullable<KeyedRateLimiter['get']>)(key)
      if (own.tryAcquire()) return true
      this.retryAfter = retrySeconds(own.retryAfterMs())
      return false
    }
    if (rate.tryAcquire(key as never)) return true
    this.retryAfter =
      rate.retryAfterMs !== undefined ? retrySeconds(rate.retryAfterMs(key as never)) : this.overloadRetryAfter
    return false
  }

  private shed(code: number, p: number): number {
    if (this.sheds.hasListeners) {
      const reason = shedReason(code) as ShedReason
      this.sheds.emit({ reason, priority: PRIORITY_NAMES[p], retryAfter: this.retryAfter })
    }
    return code
  }
}

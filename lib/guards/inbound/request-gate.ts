import type { BbrLimiter } from '../../components/bbr/bbr-limiter'
import { Shed } from '../../foundation/errors/shed'
import { MODE } from '../../components/switches/switch-layout'
import type { Switchboard } from '../../components/switches/switchboard'
import { addressKey, deadlineReader, jittered, retrySeconds } from './inbound-helpers'
import type { RequestAccess } from './inbound-guard-types'
import type { GlobalRateLimiter, KeyedRateLimiter } from './gateway-options'
import type { ResolvedInboundOptions } from './inbound-options'
import { RateLimitHeaders } from './rate-limit-headers'

const MODE_NONE = 0
const MODE_KEYED = 1 // tryAcquire(key)
const MODE_GLOBAL = 2 // tryAcquire()

/**
 * The inbound guard's checks before any limiter: an operator's switch on the request's class or route, its
 * deadline, the rate limit. Made only when one of them is configured, so that a guard without them pays one
 * `undefined` test per request. `check` answers 0 (go on) or the Shed code of the refusal, counted, with
 * `retryAfter` set; it never throws and allocates nothing.
 */
export class RequestGate<Req> {
  /** Seconds the last refusal asks the client to wait. */
  retryAfter = 0
  /** The last checked request's deadline (Date.now() ms), NaN when it has none. */
  deadlineAt = NaN
  /** The last Shed.forced came from a fallback switch (answered with reason 'forced'). */
  forcedFallback = false
  shedForced = 0
  shedDeadline = 0
  rateLimited = 0
  /** The rate limit's header fields for the last checked request (with `rateLimit.headers`), else undefined. */
  limitHeaders: string[] | undefined = undefined
  private readonly headers: RateLimitHeaders | undefined
  private readonly switches: Switchboard | undefined
  private readonly routeOf: ((request: Req) => string) | undefined
  private readonly remainingOf: ((request: Req) => number) | undefined
  private readonly limiter: BbrLimiter | undefined
  private readonly mode: number
  private readonly rateLimiter: KeyedRateLimiter | GlobalRateLimiter | undefined
  private readonly keyOf: ((request: Req) => string) | undefined
  private readonly access: RequestAccess<Req>
  private readonly overloadRetryAfter: number
  private readonly jitter: number
  private readonly random: () => number
  // The last client address and its key: a keep-alive connection's requests reuse it without parsing again.
  private lastAddress: unknown = undefined
  private lastKey = 'unknown'

  /**
   * The gate for these options, or undefined when they configure no switch, deadline or rate limit; `policy` names
   * the rate limit in its header fields.
   */
  static of<Req>(
    o: ResolvedInboundOptions<Req>,
    access: RequestAccess<Req>,
    policy = 'default',
  ): RequestGate<Req> | undefined {
    const remainingOf = deadlineReader(o.degrade.deadline, access)
    if (o.switches === undefined && remainingOf === undefined && o.rateLimit === undefined) return undefined
    return new RequestGate(o, access, remainingOf, policy)
  }

  private constructor(
    o: ResolvedInboundOptions<Req>,
    access: RequestAccess<Req>,
    remainingOf: ((request: Req) => number) | undefined,
    policy: string,
  ) {
    this.switches = o.switches
    this.routeOf = o.route
    this.remainingOf = remainingOf
    this.limiter = o.limiter
    this.access = access
    this.overloadRetryAfter = o.retryAfter
    this.jitter = o.retryAfterJitter
    this.random = o.random
    const rate = o.rateLimit
    this.rateLimiter = rate?.limiter
    this.keyOf = rate?.key
    this.headers = rate?.headers === undefined ? undefined : new RateLimitHeaders(rate.limiter, rate.headers, policy)
    if (rate === undefined) this.mode = MODE_NONE
    // A KeyedLimiter (it has get) is keyed even without a key function: by the client's address.
    else if (rate.key !== undefined || typeof (rate.limiter as { get?: unknown }).get === 'function')
      this.mode = MODE_KEYED
    else this.mode = MODE_GLOBAL
  }

  /** 0 when `request` (of class `p`) may go on to the limiters, else the Shed code that refuses it (counted). */
  check(request: Req, p: number): number {
    if (this.headers !== undefined) this.limitHeaders = undefined
    const board = this.switches
    if (board !== undefined) {
      board.refresh() // one atomic load unless an operator changed a switch
      if (board.hasTrafficSwitches && this.forced(board, request, p)) {
        this.shedForced++
        this.retryAfter = jittered(this.overloadRetryAfter, this.jitter, this.random)
        return Shed.forced
      }
    }
    if (this.remainingOf !== undefined && this.pastDeadline(request)) {
      this.shedDeadline++
      this.retryAfter = jittered(this.overloadRetryAfter, this.jitter, this.random)
      return Shed.deadline
    }
    if (this.mode !== MODE_NONE && !this.withinRate(request)) {
      this.rateLimited++
      return Shed.rateLimit
    }
    return 0
  }

  /** Whether a switch on the request's class or route forces it off (its mode kept for the fallback's reason). */
  private forced(board: Switchboard, request: Req, p: number): boolean {
    let mode = board.priorityMode(p)
    if (mode === 0 && this.routeOf !== undefined) mode = board.routeMode(this.routeOf(request))
    if (mode === 0) return false
    this.forcedFallback = mode === MODE.fallback
    return true
  }

  /**
   * Whether `request`'s deadline leaves less than the service time the limiter expects (its minRt, the fastest
   * recent bucket's mean: docs/guide/degrade.md); sets `deadlineAt` for propagation.
   */
  private pastDeadline(request: Req): boolean {
    const remaining = (this.remainingOf as (request: Req) => number)(request)
    if (remaining !== remaining) {
      this.deadlineAt = NaN
      return false
    }
    this.deadlineAt = Date.now() + remaining
    return remaining <= 0 || (this.limiter !== undefined && remaining < this.limiter.expectedServiceMs())
  }

  private withinRate(request: Req): boolean {
    const rate = this.rateLimiter as KeyedRateLimiter & GlobalRateLimiter
    if (this.mode === MODE_GLOBAL) {
      const admitted = rate.tryAcquire()
      if (this.headers !== undefined) this.limitHeaders = this.headers.describe(undefined)
      if (admitted) return true
      this.retryAfter = jittered(retrySeconds(rate.retryAfterMs()), this.jitter, this.random)
      return false
    }
    const key = this.keyOf !== undefined ? String(this.keyOf(request)) : this.clientKey(this.access.address(request))
    const admitted = rate.tryAcquire(key as never)
    if (this.headers !== undefined) this.limitHeaders = this.headers.describe(key)
    if (admitted) return true
    this.retryAfter = jittered(
      rate.retryAfterMs !== undefined ? retrySeconds(rate.retryAfterMs(key as never)) : this.overloadRetryAfter,
      this.jitter,
      this.random,
    )
    return false
  }

  private clientKey(address: unknown): string {
    if (address !== this.lastAddress) {
      this.lastAddress = address
      this.lastKey = addressKey(address)
    }
    return this.lastKey
  }
}

import type { BbrLimiter, BbrLimiterStats } from '../bbr/bbr-limiter'
import { PRIORITY_NAMES, type PriorityName } from '../bbr/priority'
import type { Waiter } from '../policies/admission-queue'
import { type Event, EventSource } from '../events/event-source'
import { Shed, shedReason, type ShedReason } from '../shed/shed'
import { MODE } from '../switches/switch-layout'
import type { Switchboard } from '../switches/switchboard'
import { type ResolvedDegrade, timeoutFor } from './degrade-options'
import { addressKey, classOf, deadlineReader, retrySeconds } from './inbound-helpers'
import { checkFallbackResponse, type DegradedAnswer, type Fallback, type FallbackReason } from './fallback'
import type { KeyConcurrencyLimiter, KeyConcurrencyLimiterStats } from '../policies/key-concurrency-limiter'
import { type KeyConcurrencyPort, NO_TOKEN } from './key-concurrency-port'
import {
  type GlobalRateLimiter,
  type InboundGuardOptions,
  type KeyedRateLimiter,
  MAX_RETRY_AFTER,
  resolveInboundOptions,
} from './inbound-options'
import { registerComponent } from '../metrics/component-registry'

export interface ShedEvent {
  reason: ShedReason
  priority: PriorityName
  /** Seconds the answer asks the client to wait. */
  retryAfter: number
}

export interface InboundGuardStats {
  /** Requests answered 429 by the rate limit. */
  rateLimited: number
  /** Requests answered 429 because their key had its `keyConcurrency` requests in flight (Shed.keyConcurrency). */
  shedKeyConcurrency: number
  /** Requests refused by an operator's switch (Shed.forced), answered from the fallback when that switch says so. */
  shedForced: number
  /** Requests refused at once because their deadline was shorter than the expected service time (Shed.deadline). */
  shedDeadline: number
  /** Admitted requests dropped before their handler ran because their client was already gone. */
  clientGone: number
  /** Requests whose handler did not answer within `timeout`. */
  timedOut: number
  /** Requests answered by the fallback. */
  fallbacks: number
  /** Fallback calls that threw or returned something that is not an answer (answered plainly instead). */
  fallbackErrors: number
  /** The adaptive limiter's stats (undefined without one). */
  limiter: BbrLimiterStats | undefined
  /** The per-key concurrency limiter's stats (undefined without `keyConcurrency`). */
  keyConcurrency: KeyConcurrencyLimiterStats | undefined
}

/** How the guard reads a framework's request: a header's value and the client's address. */
export interface RequestAccess<Req> {
  header(request: Req, name: string): unknown
  address(request: Req): string | undefined
  /** Milliseconds the caller will still wait, from the transport itself (gRPC's deadline); NaN for none. */
  remaining?(request: Req): number
  /** Checks what the fallback returned (default: an HTTP answer); throws when it is not an answer. */
  checkAnswer?(value: unknown): unknown
}

/** What `answer` returns when the fallback failed: the request gets the plain 503. */
export const FALLBACK_FAILED = null

/** What tryAcquire returns for a request that may wait in the limiter's queue: call `waitForSlot` next. */
export const QUEUED = -100

const MODE_NONE = 0
const MODE_KEYED = 1 // tryAcquire(key)
const MODE_GLOBAL = 2 // tryAcquire()
const NO_CLASS = 4 // a header that names no class (classes are 0-3)

/**
 * The decision every inbound adapter (node:http, Express, Fastify, Koa, gRPC) makes, in one place: the rate
 * limit, then the adaptive limiter at the request's priority. `tryAcquire` returns a token >= 0 to give back with
 * `release` exactly once when the response is over, or a negative Shed code; after a shed, `retryAfter` holds
 * the seconds to announce. With a limiter made with `maxWait`, it may answer QUEUED: the request waits for a slot
 * (`waitForSlot`, docs/rules/queue.md). Neither allocates (unless a shed listener is subscribed) nor throws.
 */
export class InboundGuard<Req> {
  readonly limiter: BbrLimiter | undefined
  /** The per-key concurrency limiter (undefined without `keyConcurrency`). */
  readonly keyConcurrency: KeyConcurrencyLimiter | undefined
  /** Fires on every shed request (the subscription costs an event object per shed). */
  readonly onShed: Event<ShedEvent>
  /** Seconds the last shed asks the client to wait before trying again. */
  retryAfter = 0
  /** @internal The last admitted request's deadline (Date.now() ms), NaN when it has none. */
  deadlineAt = NaN
  /** The fallback (undefined without one). */
  readonly fallback: Fallback<Req> | undefined
  /** @internal Whether handlers run in the deadline's async context (`deadline.propagate`). */
  readonly propagatesDeadline: boolean
  /** @internal Whether the guard answers in place of a slow handler (a `timeout` is set). */
  readonly timesOut: boolean
  private readonly degrade: ResolvedDegrade<Req>
  private readonly switches: Switchboard | undefined
  private readonly routeOf: ((request: Req) => string) | undefined
  /** The last Shed.forced came from a fallback switch (answered with reason 'forced'). */
  private forcedFallback = false
  private shedForcedCount = 0
  private readonly checkAnswer: (value: unknown) => unknown
  private readonly remainingOf: ((request: Req) => number) | undefined
  private shedDeadlineCount = 0
  private clientGoneCount = 0
  private timedOutCount = 0
  private fallbackCount = 0
  private fallbackErrorCount = 0
  private readonly sheds = new EventSource<ShedEvent>()
  private readonly access: RequestAccess<Req>
  private readonly ownsLimiter: boolean
  private readonly mode: number
  private readonly rateLimiter: KeyedRateLimiter | GlobalRateLimiter | undefined
  private readonly keyOf: ((request: Req) => string) | undefined
  private readonly header: string | undefined
  private readonly priorityOf: ((request: Req) => unknown) | undefined
  private readonly trusts: ((request: Req) => boolean) | undefined
  private readonly fairKey: ((request: Req) => string) | undefined
  private readonly defaultPriority: number
  private readonly overloadRetryAfter: number
  private readonly jitter: number
  private readonly random: () => number
  private rateLimitedCount = 0
  private shedKeyConcurrencyCount = 0
  /** The key of the request tryAcquire last answered QUEUED for, with keyConcurrency. */
  private pendingConcurrencyKey: string | undefined = undefined
  private readonly keys: KeyConcurrencyPort<Req> | undefined
  // The last client address and its key: a keep-alive connection's requests reuse it without parsing again.
  private lastAddress: unknown = undefined
  private lastKey = 'unknown'
  // The request tryAcquire last answered QUEUED: its refusal, class and fairness key, for waitForSlot.
  private pendingCode = 0
  private pendingClass = 0
  private pendingKey: string | undefined = undefined

  constructor(options: InboundGuardOptions<Req> | undefined, access: RequestAccess<Req>) {
    const o = resolveInboundOptions<Req>(options, access.remaining !== undefined)
    this.access = access
    this.limiter = o.limiter
    this.ownsLimiter = o.ownsLimiter
    this.header = o.priorityHeader
    this.priorityOf = o.priority
    this.trusts = o.trustPriority
    this.fairKey = o.fairKey
    this.defaultPriority = o.defaultPriority
    this.overloadRetryAfter = o.retryAfter
    this.jitter = o.retryAfterJitter
    this.random = o.random
    this.onShed = this.sheds.event
    this.degrade = o.degrade
    this.switches = o.switches
    this.routeOf = o.route
    this.checkAnswer = access.checkAnswer ?? checkFallbackResponse
    this.fallback = this.degrade.fallback
    this.timesOut = this.degrade.timeout !== 0
    this.propagatesDeadline = this.degrade.deadline?.propagate === true
    this.remainingOf = deadlineReader(o.degrade.deadline, access)
    const rate = o.rateLimit
    this.rateLimiter = rate?.limiter
    this.keyOf = rate?.key
    if (rate === undefined) this.mode = MODE_NONE
    // A KeyedLimiter (it has get) is keyed even without a key function: by the client's address.
    else if (rate.key !== undefined || typeof (rate.limiter as { get?: unknown }).get === 'function')
      this.mode = MODE_KEYED
    else this.mode = MODE_GLOBAL
    this.keys = o.keyConcurrency
    this.keyConcurrency = this.keys?.limiter
  }

  /** @internal Whether admitted requests hold a token that must be released (false when there is no adaptive limiter). */
  get tracksInFlight(): boolean {
    return this.limiter !== undefined || this.keys !== undefined
  }

  /** Decides one request: a token >= 0 to release when its response is over, a Shed code (negative), or QUEUED. */
  tryAcquire(request: Req): number {
    const p = this.classOfRequest(request)
    const board = this.switches
    if (board !== undefined) {
      board.refresh() // one atomic load unless an operator changed a switch
      if (board.hasTrafficSwitches && this.forced(board, request, p)) {
        this.shedForcedCount++
        this.retryAfter = this.spread(this.overloadRetryAfter)
        return this.shed(Shed.forced, p)
      }
    }
    if (this.remainingOf !== undefined && this.pastDeadline(request)) {
      this.shedDeadlineCount++
      this.retryAfter = this.spread(this.overloadRetryAfter)
      return this.shed(Shed.deadline, p)
    }
    if (this.mode !== MODE_NONE && !this.withinRate(request)) {
      this.rateLimitedCount++
      return this.shed(Shed.rateLimit, p)
    }
    const keys = this.keys
    if (keys === undefined) return this.admit(request, p)
    const key = String(keys.key(request)) // as the rate limit's key: never refused for its type
    const keyToken = keys.limiter.tryAcquire(key)
    if (keyToken < 0) return this.shedKey(p)
    let token = NO_TOKEN
    if (this.limiter !== undefined) {
      token = this.admit(request, p)
      if (token < 0) {
        // Refused, or queued: a waiting request holds no slot of its key (it takes one when admitted).
        keys.limiter.release(keyToken)
        if (token === QUEUED) this.pendingConcurrencyKey = key
        return token
      }
    }
    return this.pairOrShed(keys, keyToken, token, p)
  }

  /** One token for the key's slot and the adaptive limiter's `token`; both given back when that cannot be. */
  private pairOrShed(keys: KeyConcurrencyPort<Req>, keyToken: number, token: number, p: number): number {
    const paired = keys.pair(keyToken, token)
    if (paired >= 0) return paired
    // A million requests in flight in this guard: refused like a key at its limit.
    keys.limiter.release(keyToken)
    if (token >= 0) this.limiter?.release(token, false)
    return this.shedKey(p)
  }

  private shedKey(p: number): number {
    this.shedKeyConcurrencyCount++
    this.retryAfter = this.spread(this.overloadRetryAfter)
    return this.shed(Shed.keyConcurrency, p)
  }

  /** A queued request the limiter admitted: its key's slot now, or Shed.keyConcurrency (its token given back). */
  private admitQueued(key: string, token: number, p: number): number {
    const keys = this.keys as KeyConcurrencyPort<Req>
    const keyToken = keys.limiter.tryAcquire(key)
    if (keyToken >= 0) return this.pairOrShed(keys, keyToken, token, p)
    this.limiter?.release(token, false)
    return this.shedKey(p)
  }

  /** The adaptive limiter's decision: a token >= 0, or a Shed code (counted). */
  private admit(request: Req, p: number): number {
    const limiter = this.limiter
    if (limiter === undefined) return 0
    const key = this.fairKey === undefined ? undefined : this.fairKey(request)
    const token = limiter.tryAcquire(p, key)
    if (token >= 0) return token
    const queue = limiter.queue
    if (queue !== undefined) {
      if (queue.hasRoom) {
        this.pendingCode = token
        this.pendingClass = p
        this.pendingKey = key
        return QUEUED
      }
      queue.countFull()
    }
    this.retryAfter = this.spread(this.overloadRetryAfter)
    return this.shed(token, p)
  }

  /**
   * Queues the request tryAcquire just answered QUEUED for (docs/rules/queue.md): `done(token)` is called once,
   * later, with a token >= 0 (admitted: release it as any other) or Shed.queueTimeout (answer it as any refusal:
   * `retryAfter` is set). Cancel the Waiter when the client goes away: its place is freed and done is not called.
   */
  waitForSlot(done: (token: number) => void): Waiter {
    const p = this.pendingClass
    const deadlineAt = this.deadlineAt
    const limiter = this.limiter as BbrLimiter
    const concurrencyKey = this.pendingConcurrencyKey
    const waiter = limiter.waitForSlot(this.pendingCode, p, this.pendingKey, (token) => {
      this.deadlineAt = deadlineAt // the adapters read it for the request they admit
      if (token < 0) {
        this.retryAfter = this.spread(this.overloadRetryAfter)
        this.shed(token, p)
      }
      done(token >= 0 && concurrencyKey !== undefined ? this.admitQueued(concurrencyKey, token, p) : token)
    })
    this.pendingKey = undefined
    this.pendingConcurrencyKey = undefined
    return waiter as Waiter // tryAcquire saw room in the queue, in this same turn
  }

  /**
   * The request's class: the application's `priority(request)` (else the default), lowered by the priority header
   * if it names a lower class, raised by it only for a request `trustPriority` accepts (docs/guide/trust.md).
   */
  private classOfRequest(request: Req): number {
    const p =
      this.priorityOf !== undefined ? classOf(this.priorityOf(request), this.defaultPriority) : this.defaultPriority
    if (this.header === undefined) return p
    const asked = classOf(this.access.header(request, this.header), NO_CLASS)
    if (asked === NO_CLASS || asked === p) return p
    if (asked > p) return asked
    return this.trusts !== undefined && this.trusts(request) === true ? asked : p
  }

  /** `seconds` plus the jitter: a whole number of seconds in [seconds, seconds + retryAfterJitter], at most a day. */
  private spread(seconds: number): number {
    if (this.jitter === 0) return seconds
    const r = this.random()
    const s = r >= 0 && r < 1 ? seconds + Math.floor(r * (this.jitter + 1)) : seconds
    return s < MAX_RETRY_AFTER ? s : MAX_RETRY_AFTER
  }

  /**
   * Gives back an admitted request's token (a no-op without an adaptive limiter); `measured` false for a request
   * whose time says nothing about the service's (a failure, an abandoned request).
   */
  release(token: number, measured = true): void {
    if (this.keys === undefined) {
      if (this.limiter !== undefined) this.limiter.release(token, measured)
      return
    }
    const t = this.keys.unpair(token) // INVALID when not outstanding, NO_TOKEN without an adaptive limiter
    if (t >= 0) this.limiter?.release(t, measured)
  }

  /**
   * @internal
   * The fallback's answer for `request`: undefined when there is no fallback or it chose the plain answer,
   * FALLBACK_FAILED (null) when it threw or returned something that is not an answer. Never throws.
   */
  answer(request: Req, reason: FallbackReason): DegradedAnswer | undefined | null {
    const fallback = this.fallback
    if (fallback === undefined) return undefined
    try {
      const answer = this.checkAnswer(fallback(request, reason)) as DegradedAnswer | undefined
      if (answer !== undefined) this.fallbackCount++
      return answer
    } catch {
      this.fallbackErrorCount++
      return FALLBACK_FAILED
    }
  }

  /** @internal The fallback reason of a refusal: 'forced' for a fallback switch, 'rate-limit', else 'overload'. */
  reasonOf(code: number): FallbackReason {
    if (code === Shed.forced && this.forcedFallback) return 'forced'
    return code === Shed.rateLimit || code === Shed.keyConcurrency ? 'rate-limit' : 'overload'
  }

  /** @internal Milliseconds `request`'s handler has to answer (0: no timeout). */
  timeoutOf(request: Req): number {
    return timeoutFor(this.degrade.timeout, request)
  }

  /** @internal Counts a handler that did not answer in time. */
  countTimeout(): void {
    this.timedOutCount++
  }

  /** @internal Counts an admitted request dropped before its handler because its client was gone. */
  countClientGone(): void {
    this.clientGoneCount++
  }

  stats(): InboundGuardStats {
    return {
      rateLimited: this.rateLimitedCount,
      shedKeyConcurrency: this.shedKeyConcurrencyCount,
      shedForced: this.shedForcedCount,
      shedDeadline: this.shedDeadlineCount,
      clientGone: this.clientGoneCount,
      timedOut: this.timedOutCount,
      fallbacks: this.fallbackCount,
      fallbackErrors: this.fallbackErrorCount,
      limiter: this.limiter?.stats(),
      keyConcurrency: this.keyConcurrency?.stats(),
    }
  }

  /** Closes the adaptive limiter if the guard created it from options. Idempotent. */
  close(): void {
    if (this.ownsLimiter) this.limiter?.close()
    this.keys?.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** Whether a switch on the request's class or route forces it off (its mode kept for reasonOf). */
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
      if (rate.tryAcquire()) return true
      this.retryAfter = this.spread(retrySeconds(rate.retryAfterMs()))
      return false
    }
    const key = this.keyOf !== undefined ? String(this.keyOf(request)) : this.clientKey(this.access.address(request))
    if (rate.tryAcquire(key as never)) return true
    this.retryAfter = this.spread(
      rate.retryAfterMs !== undefined ? retrySeconds(rate.retryAfterMs(key as never)) : this.overloadRetryAfter,
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

  private shed(code: number, p: number): number {
    if (this.sheds.hasListeners) {
      const reason = shedReason(code) as ShedReason
      this.sheds.emit({ reason, priority: PRIORITY_NAMES[p], retryAfter: this.retryAfter })
    }
    return code
  }
}
registerComponent('InboundGuard', InboundGuard)

import type { BbrLimiter } from '../../components/bbr/bbr-limiter'
import { PRIORITY_NAMES } from '../../admission/priority'
import type { Waiter } from '../../admission/queue/admission-queue'
import { type Event, EventSource } from '../../foundation/common/event-source'
import { Shed, shedReason, type ShedReason } from '../../foundation/errors/shed'
import { ConnectionCount } from './connection-count'
import { classOf, jittered } from './inbound-helpers'
import { QUEUED, type RequestAccess, type ShedEvent } from './inbound-guard-types'
import type { ResolvedInboundOptions } from './inbound-options'
import { type KeyConcurrencyPort, NO_TOKEN } from './key-concurrency-port'
import type { RouteRule } from './route-rule'

const NO_CLASS = 4 // a header that names no class (classes are 0-3)

/**
 * The inbound guard's admission under one rule (the guard's own, or a route's): the request's class, its
 * connection's bound, the gate's checks (a switch, the deadline, the rate limit), the key's concurrency, then the
 * adaptive limiter, and the queue's wiring. InboundGuard extends it with what comes before (readiness, the access
 * list and bans, the route) and after (answers, stats). Its fields are the guard's own: no extra object per request.
 */
export class GuardAdmission<Req> {
  declare readonly limiter: BbrLimiter | undefined
  /** Fires on every shed request (the subscription costs an event object per shed). */
  declare readonly onShed: Event<ShedEvent>
  /** Seconds the last shed asks the client to wait before trying again. */
  retryAfter = 0
  /** @internal The last admitted request's deadline (Date.now() ms), NaN when it has none. */
  deadlineAt = NaN
  /** @internal The rate limit's header fields for the last decision ([name, value, ...]), undefined for none. */
  limitHeaders: string[] | undefined = undefined
  /** @internal Admitted requests per connection, for `connectionConcurrency` (undefined: no bound). */
  declare readonly connections: ConnectionCount | undefined
  protected readonly sheds = new EventSource<ShedEvent>()
  declare protected readonly access: RequestAccess<Req>
  declare protected readonly writesHeaders: boolean
  declare protected readonly defaultPriority: number
  declare protected readonly overloadRetryAfter: number
  declare private readonly header: string | undefined
  declare private readonly trusts: ((request: Req) => boolean) | undefined
  declare private readonly fairKey: ((request: Req) => string) | undefined
  declare private readonly jitter: number
  declare private readonly random: () => number
  protected shedKeyConcurrencyCount = 0
  protected shedConnectionCount = 0
  /** The last refusal by a gate was a fallback switch's (answered with reason 'forced'). */
  protected forcedFallback = false
  // The request decided last: its class; if it was QUEUED, its refusal, rule, fairness key and concurrency key.
  protected pendingClass = 0
  private pendingCode = 0
  private pendingRule: RouteRule<Req> | undefined = undefined
  private pendingKey: string | undefined = undefined
  private pendingConcurrencyKey: string | undefined = undefined

  constructor(o: ResolvedInboundOptions<Req>, access: RequestAccess<Req>, writesHeaders: boolean) {
    this.limiter = o.limiter
    this.onShed = this.sheds.event
    this.connections = o.connectionConcurrency > 0 ? new ConnectionCount(o.connectionConcurrency) : undefined
    this.access = access
    this.writesHeaders = writesHeaders
    this.defaultPriority = o.defaultPriority
    this.overloadRetryAfter = o.retryAfter
    this.header = o.priorityHeader
    this.trusts = o.trustPriority
    this.fairKey = o.fairKey
    this.jitter = o.retryAfterJitter
    this.random = o.random
  }

  /** The decision under `rule`: a token >= 0, a Shed code (counted), or QUEUED. */
  protected decide(request: Req, connection: object | undefined, rule: RouteRule<Req>): number {
    const p = this.classOfRequest(request, rule)
    this.pendingClass = p
    const connections = this.connections
    if (connections !== undefined && connection !== undefined && connections.full(connection)) {
      this.shedConnectionCount++
      this.retryAfter = jittered(this.overloadRetryAfter, this.jitter, this.random)
      return this.shed(Shed.connectionConcurrency, p)
    }
    const gate = rule.gate
    if (gate !== undefined) {
      const code = gate.check(request, p)
      this.deadlineAt = gate.deadlineAt
      if (this.writesHeaders) this.limitHeaders = gate.limitHeaders
      if (code !== 0) {
        this.retryAfter = gate.retryAfter
        this.forcedFallback = gate.forcedFallback
        return this.shed(code, p)
      }
    }
    // The fairness key before any slot is taken: a function that throws must find nothing held.
    const fair = this.fairKey === undefined ? undefined : this.fairKey(request)
    const keys = rule.keys
    if (keys === undefined) return this.admit(p, fair, rule)
    const key = String(keys.key(request)) // as the rate limit's key: never refused for its type
    const keyToken = keys.limiter.tryAcquire(key)
    if (keyToken < 0) return this.shedKey(p)
    let token = NO_TOKEN
    if (this.limiter !== undefined) {
      token = this.admit(p, fair, rule)
      if (token < 0) {
        // Refused, or queued: a waiting request holds no slot of its key (it takes one when admitted).
        keys.limiter.release(keyToken)
        if (token === QUEUED) this.pendingConcurrencyKey = key
        return token
      }
    }
    const paired = keys.pairOrRelease(keyToken, token, this.limiter)
    return paired >= 0 ? paired : this.shedKey(p)
  }

  protected shedKey(p: number): number {
    this.shedKeyConcurrencyCount++
    this.retryAfter = jittered(this.overloadRetryAfter, this.jitter, this.random)
    return this.shed(Shed.keyConcurrency, p)
  }

  /** The adaptive limiter's decision: a token >= 0, or a Shed code (counted). */
  private admit(p: number, key: string | undefined, rule: RouteRule<Req>): number {
    const limiter = this.limiter
    if (limiter === undefined) return 0
    const token = limiter.tryAcquire(p, key)
    if (token >= 0) return token
    const queue = limiter.queue
    if (queue !== undefined) {
      if (queue.hasRoom) {
        this.pendingCode = token
        this.pendingRule = rule
        this.pendingKey = key
        return QUEUED
      }
      queue.countFull()
    }
    this.retryAfter = jittered(this.overloadRetryAfter, this.jitter, this.random)
    return this.shed(token, p)
  }

  /**
   * Queues the request tryAcquire just answered QUEUED for (docs/rules/queue.md): `done(token)` is called once,
   * later, with a token >= 0 (admitted: release it as any other) or Shed.queueTimeout (answer it as any refusal:
   * `retryAfter` is set). Cancel the Waiter when the client goes away: its place is freed and done is not called.
   */
  waitForSlot(done: (token: number) => void): Waiter {
    const p = this.pendingClass
    const rule = this.pendingRule as RouteRule<Req>
    const deadlineAt = this.deadlineAt
    const headers = this.limitHeaders?.slice() // later decisions refill the list
    const limiter = this.limiter as BbrLimiter
    const concurrencyKey = this.pendingConcurrencyKey
    const onSlot = (token: number): void => {
      this.deadlineAt = deadlineAt // the adapters read it for the request they admit
      this.limitHeaders = headers
      if (token < 0) {
        this.retryAfter = jittered(this.overloadRetryAfter, this.jitter, this.random)
        this.shed(token, p)
      }
      const t = token >= 0 && concurrencyKey !== undefined ? this.admitQueued(rule, concurrencyKey, token, p) : token
      done(t >= 0 ? this.admitted(rule, t, p) : t)
    }
    // A request with a deadline waits no longer than it leaves time to serve it (docs/rules/queue.md).
    const left = deadlineAt === deadlineAt ? deadlineAt - Date.now() : undefined
    const waiter = limiter.waitForSlot(this.pendingCode, p, this.pendingKey, onSlot, left)
    this.pendingKey = undefined
    this.pendingConcurrencyKey = undefined
    this.pendingRule = undefined
    return waiter as Waiter // tryAcquire saw room in the queue, in this same turn
  }

  /** The token the adapters carry for `token` of `rule` (the guard wraps it when routes need to know). */
  protected admitted(_rule: RouteRule<Req>, token: number, _p: number): number {
    return token
  }

  /** A queued request the limiter admitted: its key's slot now, or Shed.keyConcurrency (its token given back). */
  private admitQueued(rule: RouteRule<Req>, key: string, token: number, p: number): number {
    const keys = rule.keys as KeyConcurrencyPort<Req>
    const keyToken = keys.limiter.tryAcquire(key)
    if (keyToken >= 0) {
      const paired = keys.pairOrRelease(keyToken, token, this.limiter)
      return paired >= 0 ? paired : this.shedKey(p)
    }
    this.limiter?.release(token, false)
    return this.shedKey(p)
  }

  /**
   * The request's class: its route's, else the application's `priority(request)` (else the default), lowered by the
   * priority header if it names a lower class, raised by it only for a request `trustPriority` accepts
   * (docs/guide/trust.md).
   */
  private classOfRequest(request: Req, rule: RouteRule<Req>): number {
    const p =
      rule.priority >= 0
        ? rule.priority
        : rule.priorityOf !== undefined
          ? classOf(rule.priorityOf(request), this.defaultPriority)
          : this.defaultPriority
    if (this.header === undefined) return p
    const asked = classOf(this.access.header(request, this.header), NO_CLASS)
    if (asked === NO_CLASS || asked === p) return p
    if (asked > p) return asked
    return this.trusts !== undefined && this.trusts(request) === true ? asked : p
  }

  /** Gives back `token` of a rule whose key concurrency is `keys` (INVALID and repeated tokens do nothing). */
  protected releaseWith(keys: KeyConcurrencyPort<Req> | undefined, token: number, measured: boolean): void {
    if (keys === undefined) {
      if (this.limiter !== undefined) this.limiter.release(token, measured)
      return
    }
    const t = keys.unpair(token) // INVALID when not outstanding, NO_TOKEN without an adaptive limiter
    if (t >= 0) this.limiter?.release(t, measured)
  }

  protected shed(code: number, p: number): number {
    if (this.sheds.hasListeners) {
      const reason = shedReason(code) as ShedReason
      this.sheds.emit({ reason, priority: PRIORITY_NAMES[p], retryAfter: this.retryAfter })
    }
    return code
  }
}

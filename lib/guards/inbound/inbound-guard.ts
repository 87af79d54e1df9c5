import type { BbrLimiter } from '../../components/bbr/bbr-limiter'
import { PRIORITY_NAMES } from '../../admission/priority'
import type { Waiter } from '../../admission/queue/admission-queue'
import { type Event, EventSource } from '../../foundation/common/event-source'
import { Shed, shedReason, type ShedReason } from '../../foundation/errors/shed'
import type { KeyConcurrencyLimiter } from '../../components/key-limits/key-concurrency-limiter'
import type { DegradedAnswer, Fallback, FallbackReason } from './fallback'
import { GuardAnswers } from './guard-answers'
import { classOf, jittered } from './inbound-helpers'
import { CALLBACK_FAILED, QUEUED } from './inbound-guard-types'
import type { InboundGuardStats, RequestAccess, ShedEvent } from './inbound-guard-types'
import { type InboundGuardOptions, resolveInboundOptions } from './inbound-options'
import { type KeyConcurrencyPort, NO_TOKEN } from './key-concurrency-port'
import { RequestGate } from './request-gate'
import { registerComponent } from '../../foundation/common/component-registry'
import { ConnectionCount } from './connection-count'

export { CALLBACK_FAILED, FALLBACK_FAILED, QUEUED } from './inbound-guard-types'
export type { InboundGuardStats, RequestAccess, ShedEvent } from './inbound-guard-types'

const NO_CLASS = 4 // a header that names no class (classes are 0-3)

/**
 * The decision every inbound adapter (node:http, Express, Fastify, Koa, gRPC) makes, in one place: an operator's
 * switch, the deadline and the rate limit (a RequestGate, when configured), the key's concurrency, then the
 * adaptive limiter at the request's priority. `tryAcquire` returns a token >= 0 to give back with `release`
 * exactly once when the response is over, or a negative Shed code; after a shed, `retryAfter` holds the seconds
 * to announce. With a limiter made with `maxWait`, it may answer QUEUED: the request waits for a slot
 * (`waitForSlot`, docs/rules/queue.md). Neither allocates (unless a shed listener is subscribed) nor throws.
 */
export class InboundGuard<Req> {
  declare readonly limiter: BbrLimiter | undefined
  /** The per-key concurrency limiter (undefined without `keyConcurrency`). */
  declare readonly keyConcurrency: KeyConcurrencyLimiter | undefined
  /** Fires on every shed request (the subscription costs an event object per shed). */
  declare readonly onShed: Event<ShedEvent>
  /** Seconds the last shed asks the client to wait before trying again. */
  retryAfter = 0
  /** @internal The last admitted request's deadline (Date.now() ms), NaN when it has none. */
  deadlineAt = NaN
  /** The fallback (undefined without one). */
  declare readonly fallback: Fallback<Req> | undefined
  /** @internal Whether handlers run in the deadline's async context (`deadline.propagate`). */
  declare readonly propagatesDeadline: boolean
  /** @internal Whether the guard answers in place of a slow handler (a `timeout` is set). */
  declare readonly timesOut: boolean
  declare private readonly answers: GuardAnswers<Req>
  declare private readonly gate: RequestGate<Req> | undefined
  private readonly sheds = new EventSource<ShedEvent>()
  declare private readonly access: RequestAccess<Req>
  declare private readonly ownsLimiter: boolean
  declare private readonly header: string | undefined
  declare private readonly priorityOf: ((request: Req) => unknown) | undefined
  declare private readonly trusts: ((request: Req) => boolean) | undefined
  declare private readonly fairKey: ((request: Req) => string) | undefined
  declare private readonly defaultPriority: number
  declare private readonly overloadRetryAfter: number
  declare private readonly jitter: number
  declare private readonly random: () => number
  private shedKeyConcurrencyCount = 0
  private shedConnectionCount = 0
  private callbackErrorCount = 0
  /** @internal Admitted requests per connection, for `connectionConcurrency` (undefined: no bound). */
  declare readonly connections: ConnectionCount | undefined
  declare private readonly keys: KeyConcurrencyPort<Req> | undefined
  // The request tryAcquire last answered QUEUED: its refusal, class, fairness key and concurrency key.
  private pendingCode = 0
  private pendingClass = 0
  private pendingKey: string | undefined = undefined
  private pendingConcurrencyKey: string | undefined = undefined

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
    this.answers = new GuardAnswers(o.degrade, access.checkAnswer)
    this.fallback = this.answers.fallback
    this.timesOut = this.answers.timesOut
    this.propagatesDeadline = o.degrade.deadline?.propagate === true
    this.gate = RequestGate.of(o, access)
    this.keys = o.keyConcurrency
    this.keyConcurrency = this.keys?.limiter
    this.connections = o.connectionConcurrency > 0 ? new ConnectionCount(o.connectionConcurrency) : undefined
  }

  /** @internal Whether admitted requests hold a token, or a place on their connection, to give back. */
  get tracksInFlight(): boolean {
    return this.limiter !== undefined || this.keys !== undefined || this.connections !== undefined
  }

  /**
   * Decides one request: a token >= 0 to release when its response is over, a Shed code (negative), QUEUED, or
   * CALLBACK_FAILED when a function of the options threw (docs/guide/trust.md): answer it plainly, nothing is held.
   * `connection`: its socket or HTTP/2 session, whose admitted requests `connectionConcurrency` bounds.
   */
  tryAcquire(request: Req, connection?: object): number {
    try {
      const p = this.classOfRequest(request)
      const connections = this.connections
      if (connections !== undefined && connection !== undefined && connections.full(connection)) {
        this.shedConnectionCount++
        this.retryAfter = jittered(this.overloadRetryAfter, this.jitter, this.random)
        return this.shed(Shed.connectionConcurrency, p)
      }
      const gate = this.gate
      if (gate !== undefined) {
        const code = gate.check(request, p)
        this.deadlineAt = gate.deadlineAt
        if (code !== 0) {
          this.retryAfter = gate.retryAfter
          return this.shed(code, p)
        }
      }
      // The fairness key before any slot is taken: a function that throws must find nothing held.
      const fair = this.fairKey === undefined ? undefined : this.fairKey(request)
      const keys = this.keys
      if (keys === undefined) return this.admit(p, fair)
      const key = String(keys.key(request)) // as the rate limit's key: never refused for its type
      const keyToken = keys.limiter.tryAcquire(key)
      if (keyToken < 0) return this.shedKey(p)
      let token = NO_TOKEN
      if (this.limiter !== undefined) {
        token = this.admit(p, fair)
        if (token < 0) {
          // Refused, or queued: a waiting request holds no slot of its key (it takes one when admitted).
          keys.limiter.release(keyToken)
          if (token === QUEUED) this.pendingConcurrencyKey = key
          return token
        }
      }
      const paired = keys.pairOrRelease(keyToken, token, this.limiter)
      return paired >= 0 ? paired : this.shedKey(p)
    } catch {
      this.callbackErrorCount++ // every such function runs before a slot is taken: nothing to give back
      return CALLBACK_FAILED
    }
  }

  private shedKey(p: number): number {
    this.shedKeyConcurrencyCount++
    this.retryAfter = jittered(this.overloadRetryAfter, this.jitter, this.random)
    return this.shed(Shed.keyConcurrency, p)
  }

  /** The adaptive limiter's decision: a token >= 0, or a Shed code (counted). */
  private admit(p: number, key: string | undefined): number {
    const limiter = this.limiter
    if (limiter === undefined) return 0
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
    const deadlineAt = this.deadlineAt
    const limiter = this.limiter as BbrLimiter
    const concurrencyKey = this.pendingConcurrencyKey
    const onSlot = (token: number): void => {
      this.deadlineAt = deadlineAt // the adapters read it for the request they admit
      if (token < 0) {
        this.retryAfter = jittered(this.overloadRetryAfter, this.jitter, this.random)
        this.shed(token, p)
      }
      done(token >= 0 && concurrencyKey !== undefined ? this.admitQueued(concurrencyKey, token, p) : token)
    }
    // A request with a deadline waits no longer than it leaves time to serve it (docs/rules/queue.md).
    const left = deadlineAt === deadlineAt ? deadlineAt - Date.now() : undefined
    const waiter = limiter.waitForSlot(this.pendingCode, p, this.pendingKey, onSlot, left)
    this.pendingKey = undefined
    this.pendingConcurrencyKey = undefined
    return waiter as Waiter // tryAcquire saw room in the queue, in this same turn
  }

  /** A queued request the limiter admitted: its key's slot now, or Shed.keyConcurrency (its token given back). */
  private admitQueued(key: string, token: number, p: number): number {
    const keys = this.keys as KeyConcurrencyPort<Req>
    const keyToken = keys.limiter.tryAcquire(key)
    if (keyToken >= 0) {
      const paired = keys.pairOrRelease(keyToken, token, this.limiter)
      return paired >= 0 ? paired : this.shedKey(p)
    }
    this.limiter?.release(token, false)
    return this.shedKey(p)
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
    return this.answers.answer(request, reason)
  }

  /** @internal Passes on whether a fallback answer was written, counting one Node refused (answer plainly). */
  fallbackWritten(written: boolean): boolean {
    if (!written) this.answers.unwritable()
    return written
  }

  /** @internal The fallback reason of a refusal: 'forced' for a fallback switch, 'rate-limit', else 'overload'. */
  reasonOf(code: number): FallbackReason {
    if (code === Shed.forced && this.gate?.forcedFallback === true) return 'forced'
    return code === Shed.rateLimit || code === Shed.keyConcurrency || code === Shed.connectionConcurrency
      ? 'rate-limit'
      : 'overload'
  }

  /** @internal Milliseconds `request`'s handler has to answer (0: no timeout). */
  timeoutOf(request: Req): number {
    return this.answers.timeoutOf(request)
  }

  /** @internal Counts a handler that did not answer in time. */
  countTimeout(): void {
    this.answers.timedOut++
  }

  /** @internal Counts an admitted request dropped before its handler because its client was gone. */
  countClientGone(): void {
    this.answers.clientGone++
  }

  stats(): InboundGuardStats {
    const gate = this.gate
    const answers = this.answers
    return {
      rateLimited: gate?.rateLimited ?? 0,
      shedKeyConcurrency: this.shedKeyConcurrencyCount,
      shedConnectionConcurrency: this.shedConnectionCount,
      callbackErrors: this.callbackErrorCount,
      shedForced: gate?.shedForced ?? 0,
      shedDeadline: gate?.shedDeadline ?? 0,
      clientGone: answers.clientGone,
      timedOut: answers.timedOut,
      fallbacks: answers.fallbacks,
      fallbackErrors: answers.fallbackErrors,
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

  private shed(code: number, p: number): number {
    if (this.sheds.hasListeners) {
      const reason = shedReason(code) as ShedReason
      this.sheds.emit({ reason, priority: PRIORITY_NAMES[p], retryAfter: this.retryAfter })
    }
    return code
  }
}
registerComponent('InboundGuard', InboundGuard)

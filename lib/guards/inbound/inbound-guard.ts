import { INVALID } from '../../admission/token-table'
import { Shed } from '../../foundation/errors/shed'
import type { KeyConcurrencyLimiter } from '../../components/key-limits/key-concurrency-limiter'
import { registerComponent } from '../../foundation/common/component-registry'
import { type AccessScreen, BYPASS, countsTowardBan, PASS } from './access-screen'
import type { DegradedAnswer, Fallback, FallbackReason } from './fallback'
import { isProbe, resolveGateway } from './resolve-gateway'
import { GuardAdmission } from './guard-admission'
import { GuardAnswers } from './guard-answers'
import { guardStats } from './guard-stats'
import {
  CALLBACK_FAILED,
  type InboundGuardStats,
  PROBE_NOT_READY,
  PROBE_READY,
  type RequestAccess,
} from './inbound-guard-types'
import { type InboundGuardOptions, resolveInboundOptions } from './inbound-options'
import type { Readiness } from './readiness'
import { RequestGate } from './request-gate'
import { RouteRule } from './route-rule'
import type { RouteTable } from './route-table'
import { RouteTokens } from './route-tokens'

export { CALLBACK_FAILED, FALLBACK_FAILED, PROBE_NOT_READY, PROBE_READY, QUEUED } from './inbound-guard-types'
export type { InboundGuardStats, RequestAccess, ShedEvent } from './inbound-guard-types'
export { BYPASS } from './access-screen'

// The fallback reason of a refusal no fallback answers (a deny entry, a ban, a readiness answer).
const NO_FALLBACK = 'none' as FallbackReason

/**
 * The decision every inbound adapter (node:http, Express, Fastify, Koa, gRPC) makes, in one place: the readiness
 * path, the access list and bans, the request's route (docs/guide/gateway.md), an operator's switch, the deadline
 * and the rate limit, the key's concurrency, then the adaptive limiter at the request's priority. `tryAcquire`
 * returns a token >= 0 to give back with `release` exactly once when the response is over, or a negative Shed code;
 * after a shed, `retryAfter` holds the seconds to announce. With a limiter made with `maxWait`, it may answer
 * QUEUED: the request waits for a slot (`waitForSlot`, docs/rules/queue.md). Neither allocates (unless a shed
 * listener is subscribed) nor throws.
 */
export class InboundGuard<Req> extends GuardAdmission<Req> {
  /** The per-key concurrency limiter (undefined without `keyConcurrency`). */
  declare readonly keyConcurrency: KeyConcurrencyLimiter | undefined
  /** The fallback (undefined without one). */
  declare readonly fallback: Fallback<Req> | undefined
  /** The readiness answer (undefined without `readiness`). */
  declare readonly readiness: Readiness | undefined
  /** @internal Whether handlers run in the deadline's async context (`deadline.propagate`). */
  declare readonly propagatesDeadline: boolean
  /** @internal Whether the guard answers in place of a slow handler (a `timeout` is set). */
  declare readonly timesOut: boolean
  declare private readonly answers: GuardAnswers<Req>
  declare private readonly defaults: RouteRule<Req>
  declare private readonly table: RouteTable<Req> | undefined
  declare private readonly screen: AccessScreen<Req> | undefined
  declare private readonly tokens: RouteTokens | undefined
  declare private readonly probePath: string | undefined
  declare private readonly ownsLimiter: boolean
  private bypassed = 0
  private callbackErrorCount = 0

  constructor(options: InboundGuardOptions<Req> | undefined, access: RequestAccess<Req>) {
    const o = resolveInboundOptions<Req>(options, access.remaining !== undefined)
    const routed = options?.routes !== undefined || access.route !== undefined
    const made: { table?: RouteTable<Req> } = {}
    // Without a `route` of their own, route switches name the table's routes ('GET /search').
    if (o.route === undefined && routed) o.route = (request) => (made.table as RouteTable<Req>).nameOf(request)
    const gate = RequestGate.of(o, access)
    let gateway
    try {
      gateway = resolveGateway<Req>(options ?? {}, o, gate, access)
    } catch (error) {
      if (o.ownsLimiter) o.limiter?.close() // made from options: nothing else holds it
      o.keyConcurrency?.close()
      throw error
    }
    const table = (made.table = gateway.table)
    super(o, access, routed || o.rateLimit?.headers !== undefined)
    this.ownsLimiter = o.ownsLimiter
    this.defaults = table?.defaults ?? RouteRule.defaults(o, gate)
    this.table = table
    this.screen = gateway.screen
    this.tokens = table?.wrapsTokens === true ? new RouteTokens() : undefined
    this.readiness = gateway.readiness
    this.probePath = gateway.probePath
    this.answers = new GuardAnswers(table?.degrade(o.degrade) ?? o.degrade, access.checkAnswer)
    this.fallback = this.answers.fallback
    this.timesOut = this.answers.timesOut
    this.propagatesDeadline = o.degrade.deadline?.propagate === true
    this.keyConcurrency = o.keyConcurrency?.limiter
  }

  /** @internal Whether admitted requests hold a token, or a place on their connection, to give back. */
  get tracksInFlight(): boolean {
    return (
      this.limiter !== undefined ||
      this.table !== undefined ||
      this.keyConcurrency !== undefined ||
      this.connections !== undefined
    )
  }

  /**
   * Decides one request: a token >= 0 to release when its response is over (BYPASS for a request an allow entry or
   * a skipped route lets past), a Shed code (negative), QUEUED, or for the readiness path PROBE_READY or
   * PROBE_NOT_READY (answer them with `shedReply`), or CALLBACK_FAILED when a function of the options threw
   * (docs/guide/trust.md): answer it plainly, nothing is held. `connection`: its socket or HTTP/2 session, whose
   * admitted requests `connectionConcurrency` bounds.
   */
  tryAcquire(request: Req, connection?: object): number {
    try {
      if (this.probePath !== undefined && isProbe(this.access.url?.(request), this.probePath))
        return (this.readiness as Readiness).ready() ? PROBE_READY : PROBE_NOT_READY
      if (this.writesHeaders) this.limitHeaders = undefined
      const screen = this.screen
      if (screen !== undefined) {
        const verdict = screen.check(request)
        if (verdict !== PASS) return verdict === BYPASS ? this.bypass() : this.refuseScreened(verdict, screen)
      }
      const table = this.table
      const rule = table === undefined ? this.defaults : table.match(request)
      if (rule.skip) return this.bypass()
      const token = this.decide(request, connection, rule)
      if (token >= 0) return this.tokens === undefined ? token : this.admitted(rule, token, this.pendingClass)
      if (screen !== undefined && countsTowardBan(token)) screen.strike()
      return token
    } catch {
      this.callbackErrorCount++ // every such function runs before a slot is taken: nothing to give back
      return CALLBACK_FAILED
    }
  }

  /**
   * @internal A framework's route definition as it is registered (Fastify's `onRoute`): its own policy (`bulwark`)
   * is checked and compiled now, so that a bad one fails at start-up.
   */
  declareRoute(config: object, url: unknown, method: unknown): void {
    this.table?.declare(config, url, method)
  }

  /** A request let past every limit (an allow entry, a skipped route): counted, holding nothing. */
  private bypass(): number {
    this.bypassed++
    return BYPASS
  }

  private refuseScreened(code: number, screen: AccessScreen<Req>): number {
    this.retryAfter = code === Shed.banned ? screen.retryAfter : this.overloadRetryAfter
    return this.shed(code, this.defaultPriority)
  }

  /** `token` of `rule`, wrapped when routes hold limits of their own; a full table gives it back and refuses. */
  protected override admitted(rule: RouteRule<Req>, token: number, p: number): number {
    const tokens = this.tokens
    if (tokens === undefined) return token
    const t = tokens.wrap(rule.index, token)
    if (t >= 0) return t
    this.releaseWith(rule.keys, token, false)
    return this.shedKey(p)
  }

  /**
   * Gives back an admitted request's token (a no-op without an adaptive limiter); `measured` false for a request
   * whose time says nothing about the service's (a failure, an abandoned request).
   */
  release(token: number, measured = true): void {
    if (token === BYPASS) return
    const tokens = this.tokens
    if (tokens === undefined) return this.releaseWith(this.defaults.keys, token, measured)
    const inner = tokens.unwrap(token)
    if (inner !== INVALID) this.releaseWith((this.table as RouteTable<Req>).rules[tokens.rule].keys, inner, measured)
  }

  /**
   * @internal
   * The fallback's answer for `request`: undefined when there is no fallback or it chose the plain answer (always
   * for a deny entry, a ban or a readiness answer), FALLBACK_FAILED (null) when it threw or returned something that
   * is not an answer. Never throws.
   */
  answer(request: Req, reason: FallbackReason): DegradedAnswer | undefined | null {
    return reason === NO_FALLBACK ? undefined : this.answers.answer(request, reason)
  }

  /** @internal Passes on whether a fallback answer was written, counting one Node refused (answer plainly). */
  fallbackWritten(written: boolean): boolean {
    if (!written) this.answers.unwritable()
    return written
  }

  /** @internal The fallback reason of a refusal: 'forced' for a fallback switch, 'rate-limit', else 'overload'. */
  reasonOf(code: number): FallbackReason {
    if (code === Shed.denied || code === Shed.banned || code === PROBE_READY || code === PROBE_NOT_READY)
      return NO_FALLBACK
    if (code === Shed.forced && this.forcedFallback) return 'forced'
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
    const rules = this.table?.rules ?? [this.defaults]
    const counts = {
      keys: this.shedKeyConcurrencyCount,
      connections: this.shedConnectionCount,
      bypassed: this.bypassed,
      callbackErrors: this.callbackErrorCount,
    }
    return guardStats(rules, this.answers, this.screen, counts, this.limiter, this.keyConcurrency)
  }

  /** Closes the adaptive limiter if the guard created it from options, and what else it made. Idempotent. */
  close(): void {
    if (this.ownsLimiter) this.limiter?.close()
    this.defaults.keys?.close()
    this.table?.close()
    this.screen?.close()
    this.readiness?.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }
}
registerComponent('InboundGuard', InboundGuard)

import type { Observable } from 'rxjs'

import { shedReason } from '../../foundation/errors/shed'
import { awaitSlot } from '../../guards/inbound/await-slot'
import { DEGRADED, plainAnswer, responseGone } from '../../guards/inbound/degraded-response'
import { resolveTimeout, timeoutFor } from '../../guards/inbound/degrade-options'
import type { DegradedAnswer, FallbackReason } from '../../guards/inbound/fallback'
import { checkOptions } from '../../foundation/common/validate'
import { CALLBACK_FAILED, InboundGuard, QUEUED, type RequestAccess } from '../../guards/inbound/inbound-guard'
import type { InboundGuardOptions } from '../../guards/inbound/inbound-options'
import { connectionOf, responseReleaser } from '../../guards/inbound/response-release'
import { retryAfterText, shedReply } from '../../guards/inbound/shed-reply'
import { nestCommon, type NestCommonModule, refusalClass } from './nest-exception'
import { type CallHandlerLike, interceptWith, loadRx } from './nest-interceptor'
import {
  clearResponse,
  rawRequest,
  rawResponse,
  sendAnswer,
  setFields,
  setHeader,
  type NestRequest,
  type NestResponse,
} from './nest-platform'
import { type NestRoutePolicy, policyOf } from './nest-policy'

/** The guard's options, and the `@nestjs/common` module to take HttpException from (default: the application's). */
export interface NestGuardOptions extends InboundGuardOptions<NestRequest> {
  nest?: unknown
}

/** What a Nest guard or interceptor is handed: the kind of call, the route, and (for HTTP) its request and response. */
export interface ExecutionContextLike {
  getType(): string
  getHandler(): object
  getClass(): object
  switchToHttp(): { getRequest(): unknown; getResponse(): unknown }
}

/** A Nest guard and interceptor in one (`app.useGlobalGuards(g)`, `app.useGlobalInterceptors(g)`, or BulwarkModule). */
export interface NestGuard {
  canActivate(context: ExecutionContextLike): boolean | Promise<boolean>
  intercept(context: ExecutionContextLike, next: CallHandlerLike): Observable<unknown>
  readonly guard: InboundGuard<NestRequest>
}

const POLICY = Symbol('bulwark.policy')
// The deadline of an admitted request (NaN: none); absent on a request the guard did not admit.
const DEADLINE = Symbol('bulwark.deadline')
type Marked = NestRequest & { [POLICY]?: NestRoutePolicy; [DEADLINE]?: number }

const nestAccess: RequestAccess<NestRequest> = {
  header: (request, name) => request.headers[name],
  address: (request) => request.ip ?? rawRequest(request).socket?.remoteAddress,
  method: (request) => rawRequest(request).method,
  // Express's originalUrl: its routers rewrite url on the way down.
  url: (request) => (request as { originalUrl?: string }).originalUrl ?? rawRequest(request).url,
}

// The plain answers' bodies, as objects for Nest's exception filter to send as JSON.
const bodies = new Map<string, object>()
const bodyOf = (json: string): object => bodies.get(json) ?? (bodies.set(json, JSON.parse(json)), bodies.get(json)!)

/**
 * The options with the route's policy first: its priority and timeout, over the application's options (checked
 * here as the guard checks them: a bad one is refused, not hidden behind these functions).
 */
function withRoutePolicy(o: NestGuardOptions): InboundGuardOptions<NestRequest> {
  const { nest: _nest, priority, timeout, ...rest } = checkOptions<NestGuardOptions>(o, 'options')
  if (priority !== undefined && typeof priority !== 'function') return o // refused by InboundGuard, naming it
  const fallback = resolveTimeout<NestRequest>(timeout)
  return {
    ...rest,
    priority: (request) =>
      (request as Marked)[POLICY]?.priority ?? priority?.(request) ?? rest.defaultPriority ?? 'normal',
    timeout: (request) => (request as Marked)[POLICY]?.timeout ?? timeoutFor(fallback, request),
  }
}

/**
 * The NestJS guard (NestJS 11 and 12, on Express or Fastify): as a guard, it admits each HTTP request or refuses it
 * with an HttpException of 503 or 429 (`reason`, `retryAfter`, a Retry-After header, the JSON body every adapter
 * sends), after a wait for a slot with `maxWait`; the fallback's answer, when it gives one, is sent at once. As an
 * interceptor, it adds the `timeout`, the fallback for a handler's 5xx errors, and the deadline's async context.
 * Routes take their own priority, timeout or `skip` from `@GuardPolicy()` and `@SkipGuard()`.
 *
 *   const guard = nestGuard({ limiter: { shared: 'api' } })
 *   app.useGlobalGuards(guard)
 *   app.useGlobalInterceptors(guard)
 */
export function nestGuard(options?: NestGuardOptions): NestGuard {
  const common: NestCommonModule = nestCommon(options?.nest)
  loadRx()
  const Refusal = refusalClass(common)
  const guard = new InboundGuard<NestRequest>(withRoutePolicy(options ?? {}), nestAccess)
  const bind = responseReleaser(guard)

  /** The refusal of a request (a Shed code): the fallback's answer sent now, else the plain one left to Nest. */
  const refuse = (request: NestRequest, response: NestResponse, code: number) => {
    if (code === CALLBACK_FAILED) {
      const plain = plainAnswer('error', false) // a function of the options threw: nothing is held
      return new Refusal(bodyOf(plain.body as string), plain.status, {
        reason: 'error',
        retryAfter: 0,
        answered: false,
      })
    }
    const fields = { reason: shedReason(code) ?? 'in-flight', retryAfter: guard.retryAfter, answered: false }
    const answer = guard.fallback === undefined ? undefined : guard.answer(request, guard.reasonOf(code))
    if (answer && guard.fallbackWritten(sendAnswer(response, answer)))
      return new Refusal({}, answer.status, { ...fields, answered: true })
    const r = shedReply(code)
    if (r.retries) setHeader(response, 'retry-after', retryAfterText(guard.retryAfter))
    setFields(response, guard.limitHeaders)
    return new Refusal(bodyOf(r.body), r.status, fields)
  }

  /** An answer in the handler's place (a timeout, an error the fallback answers): sent now, or left to Nest. */
  const degraded = (
    response: NestResponse,
    reason: FallbackReason,
    answer: DegradedAnswer | null | undefined,
    cause?: unknown,
  ) => {
    clearResponse(response) // from clean headers: nothing the handler set (a length, a cookie) goes with it
    if (answer != null && guard.fallbackWritten(sendAnswer(response, answer)))
      return new Refusal({}, answer.status, { reason, retryAfter: 0, answered: true }, cause)
    const fields = { reason, retryAfter: 0, answered: false }
    const plain = plainAnswer(reason, answer !== undefined)
    ;(rawResponse(response) as { [DEGRADED]?: boolean })[DEGRADED] = true // its time is not the service's
    return new Refusal(bodyOf(plain.body as string), plain.status, fields, cause)
  }

  const gone = () =>
    new Refusal({ error: 'client gone' }, 499, { reason: 'client-gone', retryAfter: 0, answered: false })

  const decided = (request: Marked, response: NestResponse, token: number): boolean => {
    if (token < 0) throw refuse(request, response, token)
    setFields(response, guard.limitHeaders)
    const raw = rawResponse(response)
    bind(raw, token, connectionOf(rawRequest(request)))
    if (responseGone(raw)) {
      guard.countClientGone()
      throw gone()
    }
    request[DEADLINE] = guard.deadlineAt
    return true
  }

  const canActivate = (context: ExecutionContextLike): boolean | Promise<boolean> => {
    if (context.getType() !== 'http') return true
    const policy = policyOf(context.getHandler(), context.getClass())
    if (policy?.skip === true) return true
    const http = context.switchToHttp()
    const request = http.getRequest() as Marked
    const response = http.getResponse() as NestResponse
    request[POLICY] = policy
    const raw = rawResponse(response)
    const token = guard.tryAcquire(request, connectionOf(rawRequest(request)))
    if (token !== QUEUED) return decided(request, response, token)
    if (responseGone(raw)) {
      guard.countClientGone()
      return Promise.reject(gone())
    }
    return new Promise((resolve, reject) => {
      const admit = (t: number) => {
        try {
          resolve(decided(request, response, t))
        } catch (refusal) {
          reject(refusal)
        }
      }
      awaitSlot(guard, raw, admit, () => reject(gone()))
    })
  }

  const intercept = (context: ExecutionContextLike, next: CallHandlerLike): Observable<unknown> => {
    if (context.getType() !== 'http') return next.handle()
    const http = context.switchToHttp()
    const request = http.getRequest() as Marked
    const deadline = request[DEADLINE]
    if (deadline === undefined) return next.handle() // not admitted by this guard (skipped, or another's)
    const clientError = (error: unknown) => error instanceof common.HttpException && statusOf(error) < 500
    return interceptWith(
      guard,
      { request, response: http.getResponse() as NestResponse, deadline, next },
      {
        degraded,
        passesThrough: clientError,
      },
    )
  }

  return { canActivate, intercept, guard }
}

function statusOf(error: unknown): number {
  const getStatus = (error as { getStatus?: () => number }).getStatus
  return typeof getStatus === 'function' ? getStatus.call(error) : 500
}

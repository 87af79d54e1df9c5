import type { IncomingMessage, ServerResponse } from 'http'

import { runWithDeadline } from '../../guards/inbound/deadline-context'
import { clearHeaders, DEGRADED, type Marked, plainAnswer, responseGone } from '../../guards/inbound/degraded-response'
import { type DegradedAnswer, errorReason, type FallbackReason } from '../../guards/inbound/fallback'
import { awaitSlot } from '../../guards/inbound/await-slot'
import { CALLBACK_FAILED, InboundGuard, QUEUED, type RequestAccess } from '../../guards/inbound/inbound-guard'
import type { InboundGuardOptions } from '../../guards/inbound/inbound-options'
import { connectionOf, responseReleaser } from '../../guards/inbound/response-release'
import { JSON_TYPE, retryAfterText, shedReply } from '../../guards/inbound/shed-reply'
import { attachSignal } from '../../guards/inbound/request-signal'

/** What the middleware reads and writes of a Koa context; `ip` honours Koa's `app.proxy`. */
export interface KoaContextLike {
  req: IncomingMessage
  res: ServerResponse
  ip?: string
  status: number
  type: string
  body: unknown
  respond?: boolean
  originalUrl?: string
  set(field: string, value: string | string[]): void
}

const koaAccess: RequestAccess<KoaContextLike> = {
  header: (ctx, name) => ctx.req.headers[name],
  address: (ctx) => ctx.ip ?? ctx.req.socket.remoteAddress,
  method: (ctx) => ctx.req.method,
  url: (ctx) => ctx.originalUrl ?? ctx.req.url,
}

export type KoaMiddleware = ((ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<unknown> | undefined) & {
  readonly guard: InboundGuard<KoaContextLike>
}

const TIMED_OUT = Symbol('timed out')

/** Sets `answer` on the context; false when Node refused one of its headers (those set so far are removed). */
function setAnswer(ctx: KoaContextLike, answer: DegradedAnswer): boolean {
  try {
    ctx.status = answer.status
    for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value as string | string[])
  } catch {
    for (const name of Object.keys(answer.headers)) ctx.res.removeHeader(name)
    return false
  }
  ctx.body = typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body)
  return true
}

/** Answers in the handler's place from clean headers (none it set: a length, a cookie). */
function setDegraded(
  guard: InboundGuard<KoaContextLike>,
  ctx: KoaContextLike,
  reason: FallbackReason,
  answer: DegradedAnswer | undefined | null,
): void {
  if (ctx.res.headersSent) return // the downstream wrote to the response itself: Koa answers nothing more
  ;(ctx.res as Marked)[DEGRADED] = true // answered in the handler's place: its time is not the service's
  clearHeaders(ctx.res)
  if (answer == null || !guard.fallbackWritten(setAnswer(ctx, answer)))
    setAnswer(ctx, plainAnswer(reason, answer !== undefined))
}

/**
 * The downstream middleware with what the guard's options add: a timeout (the downstream keeps running; what it
 * sets on the context after Koa answered is ignored by Koa), the deadline's async context, and the fallback's
 * answer for an error it throws (without an answer, the error goes on up to Koa's own handling).
 */
async function degradedNext(
  guard: InboundGuard<KoaContextLike>,
  ctx: KoaContextLike,
  next: () => Promise<unknown>,
): Promise<void> {
  const deadline = guard.deadlineAt
  const ms = guard.timesOut ? guard.timeoutOf(ctx) : 0
  let timer: ReturnType<typeof setTimeout> | undefined
  // ctx.req.signal, as Node's own (26+): aborted on the guard's timeout and when the client goes away.
  const signal = ms === 0 ? undefined : attachSignal(ctx.req)
  if (signal !== undefined) ctx.res.once('close', () => ctx.res.writableEnded || signal.clientGone())
  try {
    const work = guard.propagatesDeadline && deadline === deadline ? runWithDeadline(deadline, next) : next()
    if (ms === 0) return void (await work)
    const expired = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(resolve, ms, TIMED_OUT)))
    if ((await Promise.race([work, expired])) !== TIMED_OUT) return
    work.then(undefined, () => undefined) // its late failure goes nowhere
    guard.countTimeout()
    setDegraded(guard, ctx, 'timeout', guard.answer(ctx, 'timeout'))
    signal?.timedOut(ms)
  } catch (error) {
    const reason = errorReason(error)
    const answer = guard.answer(ctx, reason)
    if (answer === undefined) throw error
    setDegraded(guard, ctx, reason, answer)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Koa middleware: admits the request (`next()`) or answers it with 503 or 429, a Retry-After header and a JSON
 * body through the context, without calling the downstream middleware (with `maxWait`, a refused request first
 * waits for a slot: docs/rules/queue.md). With `fallback`, refusals, a `timeout`
 * and errors thrown downstream get the fallback's answer (docs/guide/degrade.md).
 *
 *   app.use(koaGuard({ limiter: { shared: 'api' } }))
 */
export function koaGuard(options?: InboundGuardOptions<KoaContextLike>): KoaMiddleware {
  const guard = new InboundGuard(options, koaAccess)
  const bind = responseReleaser(guard)
  const plain = guard.fallback === undefined && !guard.timesOut && !guard.propagatesDeadline
  const decided = (ctx: KoaContextLike, next: () => Promise<unknown>, token: number): Promise<unknown> | undefined => {
    const fields = guard.limitHeaders
    if (fields !== undefined) for (let i = 0; i < fields.length; i += 2) ctx.set(fields[i], fields[i + 1])
    if (token >= 0) {
      bind(ctx.res, token, connectionOf(ctx.req))
      if (responseGone(ctx.res)) {
        guard.countClientGone()
        ctx.respond = false // nobody to answer
        return undefined
      }
      return plain ? next() : degradedNext(guard, ctx, next) // plain: the downstream promise as it is
    }
    if (token === CALLBACK_FAILED) return void setAnswer(ctx, plainAnswer('error', false))
    const answer = guard.fallback === undefined ? undefined : guard.answer(ctx, guard.reasonOf(token))
    if (answer && guard.fallbackWritten(setAnswer(ctx, answer))) return undefined
    const r = shedReply(token)
    ctx.status = r.status
    if (r.retries) ctx.set('Retry-After', retryAfterText(guard.retryAfter))
    ctx.type = JSON_TYPE
    ctx.body = r.body
    return undefined
  }
  const middleware = (ctx: KoaContextLike, next: () => Promise<unknown>): Promise<unknown> | undefined => {
    const token = guard.tryAcquire(ctx, connectionOf(ctx.req))
    if (token !== QUEUED) return decided(ctx, next, token)
    if (responseGone(ctx.res)) {
      guard.countClientGone()
      ctx.respond = false
      return undefined
    }
    return new Promise((resolve) => {
      const gone = (): void => {
        ctx.respond = false // nobody to answer
        resolve(undefined)
      }
      awaitSlot(guard, ctx.res, (t) => resolve(decided(ctx, next, t)), gone)
    })
  }
  return Object.assign(middleware, { guard })
}

import type { IncomingMessage, ServerResponse } from 'http'

import { awaitSlot } from '../../guards/inbound/await-slot'
import { runWithDeadline } from '../../guards/inbound/deadline-context'
import { responseGone } from '../../guards/inbound/degraded-response'
import { errorReason } from '../../guards/inbound/fallback'
import { InboundGuard, QUEUED, type RequestAccess } from '../../guards/inbound/inbound-guard'
import type { InboundGuardOptions } from '../../guards/inbound/inbound-options'
import { RequestSignal } from '../../guards/inbound/request-signal'
import { connectionOf, responseReleaser } from '../../guards/inbound/response-release'
import { appendFields, degradedResponse, goneResponse, refusal } from './hono-answers'

/**
 * What the middleware reads of a Hono context (Hono 4). On Node, @hono/node-server's bindings (`c.env.incoming`,
 * `c.env.outgoing`) give the client's address, the connection, and the end of the response.
 */
export interface HonoContextLike {
  req: { raw: Request; path: string; method: string; header(name: string): string | undefined }
  env: unknown
  res: Response | undefined
  error?: Error | undefined
}

export type HonoNext = () => Promise<void>

export type HonoMiddleware = ((c: HonoContextLike, next: HonoNext) => Promise<Response | void>) & {
  readonly guard: InboundGuard<HonoContextLike>
}

interface NodeBindings {
  incoming: IncomingMessage
  outgoing: ServerResponse
}

/** @hono/node-server's bindings, when the app is served by it. */
function nodeOf(c: HonoContextLike): NodeBindings | undefined {
  const env = c.env as Partial<NodeBindings> | null | undefined
  return env?.outgoing !== undefined && env.incoming !== undefined ? (env as NodeBindings) : undefined
}

const honoAccess: RequestAccess<HonoContextLike> = {
  header: (c, name) => nodeOf(c)?.incoming.headers[name] ?? c.req.header(name),
  address: (c) => nodeOf(c)?.incoming.socket?.remoteAddress,
  method: (c) => c.req.method,
  url: (c) => nodeOf(c)?.incoming.url ?? urlPath(c.req.raw.url),
}

/** The path and query of an absolute URL (what `routes` matches), without parsing it. */
function urlPath(url: string): string {
  const scheme = url.indexOf('://')
  const path = scheme < 0 ? -1 : url.indexOf('/', scheme + 3)
  return path < 0 ? '/' : url.slice(path)
}

const TIMED_OUT = Symbol('timed out')

/**
 * `c.req.signal`: the guard's, aborted on its timeout and when the client goes away (on Node, the response closing
 * before it ended; elsewhere, the request's own signal aborting).
 */
function attachSignal(c: HonoContextLike, outgoing: ServerResponse | undefined): RequestSignal {
  const signal = new RequestSignal(outgoing === undefined ? () => c.req.raw.signal : undefined)
  outgoing?.once('close', () => outgoing.writableEnded || signal.clientGone())
  Object.defineProperty(c.req, 'signal', { configurable: true, enumerable: false, get: () => signal.signal })
  return signal
}

/** A handler's error, once Hono's onError answered it: the fallback's answer replaces that one, if it gives one. */
function answerError(guard: InboundGuard<HonoContextLike>, c: HonoContextLike, outgoing?: ServerResponse): void {
  const error = c.error
  if (error === undefined || guard.fallback === undefined) return
  const reason = errorReason(error)
  const answer = guard.answer(c, reason)
  if (answer === undefined) return // the fallback chose Hono's own answer
  replaceResponse(c, degradedResponse(guard, reason, answer, outgoing))
}

/** Sets the context's response whole: Hono would merge in the headers of the one it has (the handler's, onError's). */
function replaceResponse(c: HonoContextLike, response: Response): Response {
  c.res = undefined
  c.res = response
  return response
}

/** Runs the rest of the chain with what the options add: a timeout, the deadline's context, the error fallback. */
async function run(
  guard: InboundGuard<HonoContextLike>,
  c: HonoContextLike,
  next: HonoNext,
  outgoing?: ServerResponse,
) {
  const deadline = guard.deadlineAt
  const ms = guard.timesOut ? guard.timeoutOf(c) : 0
  const signal = ms === 0 ? undefined : attachSignal(c, outgoing) // before the handler runs: it reads it
  const work = guard.propagatesDeadline && deadline === deadline ? runWithDeadline(deadline, next) : next()
  if (signal === undefined) {
    await work
    return answerError(guard, c, outgoing)
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(resolve, ms, TIMED_OUT)))
  try {
    if ((await Promise.race([work, expired])) !== TIMED_OUT) return answerError(guard, c, outgoing)
  } finally {
    clearTimeout(timer)
  }
  work.then(undefined, () => undefined) // its late failure goes nowhere
  guard.countTimeout()
  // From clean headers: nothing the handler set (a length, a cookie) goes with it.
  const answer = replaceResponse(c, degradedResponse(guard, 'timeout', guard.answer(c, 'timeout'), outgoing))
  signal.timedOut(ms)
  return answer
}

/** Where a waiting request learns that its client left: the response's 'close', else the request's signal. */
function closableOf(c: HonoContextLike, node: NodeBindings | undefined) {
  if (node !== undefined) return node.outgoing
  const signal = c.req.raw.signal
  return {
    once: (_event: 'close', listener: () => void) => signal.addEventListener('abort', listener, { once: true }),
    off: (_event: 'close', listener: () => void) => signal.removeEventListener('abort', listener),
  }
}

/** The rate limit's fields on the admitted request's response, whoever made it (the handler, a fallback). */
async function withFields(
  answer: Promise<Response | void>,
  c: HonoContextLike,
  fields: readonly string[],
): Promise<Response | void> {
  const response = await answer
  if (response !== undefined) return withHeaders(response, fields)
  if (c.res !== undefined) c.res = withHeaders(c.res, fields)
}

/** `response` with the fields; a copy when its headers are immutable (a `fetch` answer proxied as it came). */
function withHeaders(response: Response, fields: readonly string[]): Response {
  try {
    appendFields(response.headers, fields)
    return response
  } catch {
    const copy = new Response(response.body, response)
    appendFields(copy.headers, fields)
    return copy
  }
}

/**
 * Hono middleware (Hono 4): admits the request (`await next()`) or answers it at once with 503 or 429, a
 * Retry-After header and a JSON body (with `maxWait`, a refused request first waits for a slot: docs/rules/queue.md).
 * Served by @hono/node-server, an admitted request's token goes back when its response is over (streamed bodies
 * included); elsewhere, when the chain below has produced its response. With `fallback`, refusals, a `timeout` and
 * errors get the fallback's answer (docs/guide/degrade.md); with a `timeout`, the handler's signal is `c.req.signal`.
 *
 *   app.use(honoGuard({ limiter: { shared: 'api' } }))
 */
export function honoGuard(options?: InboundGuardOptions<HonoContextLike>): HonoMiddleware {
  const guard = new InboundGuard(options, honoAccess)
  const bind = responseReleaser(guard)
  const decided = async (c: HonoContextLike, next: HonoNext, token: number): Promise<Response | void> => {
    if (token < 0) return refusal(guard, c, token)
    const node = nodeOf(c)
    const fields = guard.limitHeaders
    if (fields !== undefined) return withFields(decidedNow(c, next, token, node), c, fields)
    return decidedNow(c, next, token, node)
  }
  const decidedNow = async (
    c: HonoContextLike,
    next: HonoNext,
    token: number,
    node: NodeBindings | undefined,
  ): Promise<Response | void> => {
    if (node !== undefined) {
      bind(node.outgoing, token, connectionOf(node.incoming))
      if (!responseGone(node.outgoing)) return run(guard, c, next, node.outgoing)
      guard.countClientGone()
      return goneResponse()
    }
    let measured = false
    try {
      const answer = await run(guard, c, next)
      measured = answer === undefined && c.error === undefined && (c.res?.status ?? 200) < 500
      return answer
    } finally {
      guard.release(token, measured)
    }
  }
  const middleware = (c: HonoContextLike, next: HonoNext): Promise<Response | void> => {
    const node = nodeOf(c)
    const token = guard.tryAcquire(c, node === undefined ? undefined : connectionOf(node.incoming))
    if (token !== QUEUED) return decided(c, next, token)
    if (node !== undefined && responseGone(node.outgoing)) {
      guard.countClientGone()
      return Promise.resolve(goneResponse())
    }
    return new Promise((resolve) => {
      const gone = () => resolve(goneResponse())
      awaitSlot(guard, closableOf(c, node), (t) => resolve(decided(c, next, t)), gone)
    })
  }
  return Object.assign(middleware, { guard })
}

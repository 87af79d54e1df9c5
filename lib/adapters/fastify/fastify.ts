import type { IncomingMessage, ServerResponse } from 'http'

import { enterDeadline } from '../../guards/inbound/deadline-context'
import { clearHeaders, DEGRADED, plainAnswer, responseGone } from '../../guards/inbound/degraded-response'
import { type DegradedAnswer, errorReason, type FallbackReason } from '../../guards/inbound/fallback'
import { awaitSlot } from '../../guards/inbound/await-slot'
import { CALLBACK_FAILED, InboundGuard, QUEUED, type RequestAccess } from '../../guards/inbound/inbound-guard'
import type { InboundGuardOptions } from '../../guards/inbound/inbound-options'
import { connectionOf, responseReleaser } from '../../guards/inbound/response-release'
import { JSON_TYPE, retryAfterText, shedReply } from '../../guards/inbound/shed-reply'
import { attachSignal, type RequestSignal } from '../../guards/inbound/request-signal'

/** What the plugin reads of a Fastify request; `ip` honours Fastify's `trustProxy`. */
export interface FastifyRequestLike {
  headers: IncomingMessage['headers']
  ip?: string
  raw: IncomingMessage
}

interface FastifyReplyLike {
  raw: ServerResponse & { [DEGRADED]?: boolean }
  readonly sent: boolean
  code(status: number): FastifyReplyLike
  header(name: string, value: unknown): FastifyReplyLike
  getHeaders(): Record<string, unknown>
  removeHeader(name: string): FastifyReplyLike
  send(body: unknown): unknown
}

// The answer the fallback gave for a request whose handler failed, applied when Fastify sends the error.
const ERROR_ANSWER = Symbol('bulwark.errorAnswer')
// The request's deadline, kept from admission until its handler runs.
const DEADLINE = Symbol('bulwark.deadline')
type Failed = FastifyRequestLike & { [ERROR_ANSWER]?: DegradedAnswer; [DEADLINE]?: number }

function applyHeaders(reply: FastifyReplyLike, answer: DegradedAnswer): void {
  reply.code(answer.status)
  // First a type for the body, which the answer's own headers replace (Fastify may have set one for an error).
  reply.header(
    'content-type',
    typeof answer.body === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream',
  )
  for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value)
}

/** Removes every header of the reply, Fastify's and its raw response's. */
function clearReply(reply: FastifyReplyLike): void {
  for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name)
  clearHeaders(reply.raw)
}

const bodyOf = (answer: DegradedAnswer) => (typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body))

/** Sends `answer`; false when Node refused it (a header it cannot send), with nothing sent and the reply cleared. */
function sendAnswer(reply: FastifyReplyLike, answer: DegradedAnswer): boolean {
  try {
    applyHeaders(reply, answer)
    reply.send(bodyOf(answer))
    return true
  } catch {
    if (reply.raw.headersSent) return true
    clearReply(reply)
    return false
  }
}

/**
 * Sends, in the handler's place, the fallback's answer, else (none, or one Node refused: counted) the plain one for
 * `reason`; from clean headers (none the handler set: a length, a cookie).
 */
function sendDegraded(
  guard: InboundGuard<FastifyRequestLike>,
  reply: FastifyReplyLike,
  reason: FallbackReason,
  answer: DegradedAnswer | undefined | null,
) {
  reply.raw[DEGRADED] = true
  clearReply(reply)
  if (answer != null && guard.fallbackWritten(sendAnswer(reply, answer))) return
  sendAnswer(reply, plainAnswer(reason, answer !== undefined))
}

function timedOut(
  guard: InboundGuard<FastifyRequestLike>,
  request: FastifyRequestLike,
  reply: FastifyReplyLike,
  signal: RequestSignal,
  ms: number,
) {
  if (reply.sent || reply.raw.headersSent || responseGone(reply.raw)) return
  guard.countTimeout()
  sendDegraded(guard, reply, 'timeout', guard.answer(request, 'timeout'))
  signal.timedOut(ms)
}

/** With a fallback: a handler's error is answered by it (in onSend, after Fastify's error handler chose a 5xx). */
function addErrorFallback(fastify: FastifyInstanceLike, guard: InboundGuard<FastifyRequestLike>): void {
  fastify.addHook('onError', (request: Failed, reply: FastifyReplyLike, error: unknown, done: () => void) => {
    if (reply.raw[DEGRADED] !== true) {
      const reason = errorReason(error)
      const answer = guard.answer(request, reason)
      if (answer !== undefined) request[ERROR_ANSWER] = answer ?? plainAnswer(reason, true)
    }
    done()
  })
  fastify.addHook(
    'onSend',
    (request: Failed, reply: FastifyReplyLike, payload: unknown, done: (e: null, p: unknown) => void) => {
      const answer = request[ERROR_ANSWER]
      if (answer === undefined) return done(null, payload)
      request[ERROR_ANSWER] = undefined
      reply.raw[DEGRADED] = true
      clearReply(reply) // in the handler's place: nothing it set (a length, a cookie) goes with the answer
      applyHeaders(reply, answer)
      done(null, bodyOf(answer))
    },
  )
}

/** The parts of a Fastify instance the plugin uses (Fastify 4 and 5). */
export interface FastifyInstanceLike {
  addHook(name: string, hook: (...args: any[]) => void): unknown
  initialConfig?: { http2?: boolean }
  decorate?(name: string, value: unknown): unknown
  hasDecorator?(name: string): boolean
}

// Fastify keeps a request's matched route (its `config`: url, method, and what the route declares) under a symbol of
// its own copy; `request.routeOptions` builds a new object at each read. Each plugin finds the symbol of the copy it
// was registered with, at its first request.
function routeConfigReader(): (request: FastifyRequestLike) => object | undefined {
  let context: symbol | undefined
  return (request) => {
    if (context === undefined) {
      context = Object.getOwnPropertySymbols(request).find((s) => s.description === 'fastify.context')
      if (context === undefined) return (request as { routeOptions?: { config?: object } }).routeOptions?.config
    }
    return (request as unknown as Record<symbol, { config?: object } | undefined>)[context]?.config
  }
}

const fastifyAccess: RequestAccess<FastifyRequestLike> = {
  header: (request, name) => request.headers[name],
  address: (request) => request.ip ?? request.raw.socket.remoteAddress,
  method: (request) => request.raw.method,
  url: (request) => request.raw.url,
}

export type FastifyGuardOptions = InboundGuardOptions<FastifyRequestLike>

/**
 * A Fastify plugin: an `onRequest` hook that admits the request or answers it at once with 503 or 429, a
 * Retry-After header and a JSON body, so that no later hook, parser or handler runs (with `maxWait`, a refused
 * request first waits for a slot: docs/rules/queue.md). With `fallback`, refusals, a
 * `timeout` (a function of the request can read `request.routeOptions.url`: per route) and errors get the
 * fallback's answer (docs/guide/degrade.md). Not encapsulated (it applies
 * to the whole instance, as fastify-plugin would make it); the guard is decorated as `fastify.bulwark`, and a
 * limiter it created from options is closed with the instance.
 *
 *   await app.register(fastifyGuard, { limiter: { shared: 'api' } })
 */
export function fastifyGuard(
  fastify: FastifyInstanceLike,
  options: FastifyGuardOptions | undefined,
  done: (error?: Error) => void,
): void {
  let guard: InboundGuard<FastifyRequestLike>
  try {
    guard = new InboundGuard(options, { ...fastifyAccess, route: routeConfigReader() })
  } catch (error) {
    return done(error as Error)
  }
  const bind = responseReleaser(guard)
  const decided = (request: FastifyRequestLike, reply: FastifyReplyLike, next: () => void, token: number): void => {
    const fields = guard.limitHeaders
    if (fields !== undefined) for (let i = 0; i < fields.length; i += 2) reply.header(fields[i], fields[i + 1])
    if (token >= 0) {
      bind(reply.raw, token, connectionOf(request.raw))
      if (responseGone(reply.raw)) return guard.countClientGone() // nobody to answer: no handler runs
      if (guard.propagatesDeadline) (request as Failed)[DEADLINE] = guard.deadlineAt
      if (guard.timesOut) {
        const ms = guard.timeoutOf(request)
        if (ms > 0) {
          // request.signal (Fastify's own, followed) also aborts on the guard's timeout (docs/guide/degrade.md).
          const signal = attachSignal(request)
          const timer = setTimeout(timedOut, ms, guard, request, reply, signal, ms)
          reply.raw.once('close', () => {
            clearTimeout(timer)
            if (!reply.raw.writableEnded) signal.clientGone()
          })
        }
      }
      return next()
    }
    // Answering from the hook without calling next() ends the request here.
    if (token === CALLBACK_FAILED) return void sendAnswer(reply, plainAnswer('error', false))
    if (guard.fallback !== undefined) {
      const answer = guard.answer(request, guard.reasonOf(token))
      if (answer && guard.fallbackWritten(sendAnswer(reply, answer))) return
    }
    const r = shedReply(token)
    reply.code(r.status).header('content-type', JSON_TYPE)
    if (r.retries) reply.header('retry-after', retryAfterText(guard.retryAfter))
    reply.send(r.body)
  }
  // A route's own policy (`config: { bulwark }`) is compiled as the route is registered, not at its first request.
  fastify.addHook('onRoute', (route: { url?: string; method?: unknown; config?: object }) => {
    const config = (route.config ??= {}) as { bulwark?: unknown }
    if (config.bulwark !== undefined) guard.declareRoute(config, route.url, route.method)
  })
  fastify.addHook('onRequest', (request: FastifyRequestLike, reply: FastifyReplyLike, next: () => void): void => {
    const token = guard.tryAcquire(request, connectionOf(request.raw))
    if (token !== QUEUED) return decided(request, reply, next, token)
    if (responseGone(reply.raw)) return guard.countClientGone()
    awaitSlot(guard, reply.raw, (t) => decided(request, reply, next, t))
  })
  if (guard.fallback !== undefined) addErrorFallback(fastify, guard)
  // Fastify 5 writes an HTTP/2 answer over 64 KiB in pieces, each once the client has taken the one before: an
  // answer it holds whole gives its token back when it starts sending it, not when a slow reader lets it end.
  if (fastify.initialConfig?.http2 === true)
    fastify.addHook(
      'onSend',
      (_r: unknown, reply: FastifyReplyLike, payload: unknown, next: (e: null, p: unknown) => void) => {
        if (typeof payload === 'string' || Buffer.isBuffer(payload)) bind.answered(reply.raw)
        next(null, payload)
      },
    )
  // The handler runs in the same synchronous run as the last preHandler: the deadline's context reaches it.
  if (guard.propagatesDeadline)
    fastify.addHook('preHandler', (request: Failed, _reply: unknown, next: () => void) => {
      enterDeadline(request[DEADLINE] ?? NaN) // NaN for a request without one, so that none inherits another's
      next()
    })
  fastify.addHook('onClose', (_instance: unknown, closed: () => void): void => {
    guard.close()
    closed()
  })
  if (fastify.decorate && !fastify.hasDecorator?.('bulwark')) fastify.decorate('bulwark', guard)
  done()
}

// What fastify-plugin sets: skip encapsulation (the hook applies to every route), a name, the supported versions.
Object.assign(fastifyGuard, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'bulwark',
  [Symbol.for('plugin-meta')]: { name: 'bulwark', fastify: '4.x || 5.x' },
})

import type { ServerResponse } from 'http'
import type { Http2ServerResponse, ServerHttp2Stream } from 'http2'

import { runWithDeadline } from './deadline-context'
import { errorReason, type DegradedAnswer, type FallbackReason } from './fallback'
import { CALLBACK_FAILED, type InboundGuard } from './inbound-guard'
import { attachSignal, type RequestSignal } from './request-signal'
import { JSON_TYPE, writeShed } from './shed-reply'

type NodeResponse = ServerResponse | Http2ServerResponse

/** Marks a response the guard answered in its handler's place: its time says nothing about the service's. */
export const DEGRADED = Symbol('bulwark.degraded')
export type Marked = { [DEGRADED]?: boolean }

// The plain answers where no fallback answers: a timeout and a failed fallback are 503, an error without a
// fallback answer is 500 (what a framework answers), made once.
const PLAIN_TIMEOUT = JSON.stringify({ error: 'timeout' })
const PLAIN_UNAVAILABLE = JSON.stringify({ error: 'unavailable' })
const PLAIN_ERROR = JSON.stringify({ error: 'internal error' })

/** The plain answer for `reason` when the fallback gave none (`failed`: it threw), as status and body. */
export function plainAnswer(reason: FallbackReason, failed: boolean): DegradedAnswer {
  const body = failed ? PLAIN_UNAVAILABLE : reason === 'timeout' ? PLAIN_TIMEOUT : PLAIN_ERROR
  const status = failed || reason !== 'error' ? 503 : 500
  return { status, headers: { 'content-type': JSON_TYPE }, body }
}

/** Whether the client of an admitted request is already gone (its connection, or its HTTP/2 stream, closed). */
export function responseGone(res: NodeResponse): boolean {
  const stream = (res as Http2ServerResponse).stream as ServerHttp2Stream | undefined
  if (stream !== undefined) return stream.destroyed
  const socket = (res as ServerResponse).req?.socket
  return socket != null && socket.destroyed
}

/** Removes every header `res` holds: an answer given in the handler's place carries nothing the handler set. */
export function clearHeaders(res: NodeResponse): void {
  for (const name of res.getHeaderNames()) res.removeHeader(name)
}

/**
 * Writes a fallback's answer; false when Node refused it (a header this transport cannot carry), with nothing sent
 * and the response's headers cleared, so that the plain answer can follow. Never throws.
 */
function writeAnswer(res: NodeResponse, answer: DegradedAnswer): boolean {
  try {
    ;(res as ServerResponse).writeHead(answer.status, answer.headers as Record<string, string>)
    res.end(answer.body)
    return true
  } catch {
    if (!res.headersSent) {
      clearHeaders(res)
      return false
    }
    res.destroy() // Node checks headers before it sends: if it had started all the same, cut, never leave it hanging
    return true
  }
}

/**
 * Answers a refused request: for a Shed code, the fallback's answer, else the plain 503 or 429; for CALLBACK_FAILED
 * (a function of the options threw), the plain 500.
 */
export function refuse<Req>(guard: InboundGuard<Req>, request: Req, res: NodeResponse, code: number): void {
  if (code === CALLBACK_FAILED) return void writeAnswer(res, plainAnswer('error', false))
  const answer = guard.fallback === undefined ? undefined : guard.answer(request, guard.reasonOf(code))
  if (answer && guard.fallbackWritten(writeAnswer(res, answer))) return
  writeShed(res, code, guard.retryAfter, guard.limitHeaders)
}

const noop = function (this: unknown): unknown {
  return this
}
const accepted = (): boolean => true
function endLate(this: NodeResponse, ...args: unknown[]): NodeResponse {
  const callback = args.find((a) => typeof a === 'function') as (() => void) | undefined
  if (callback !== undefined) process.nextTick(callback)
  return this
}

/**
 * From now on, whatever the handler still writes goes nowhere: no "headers already sent" error, no crash. Only the
 * response answered in the handler's place pays for these own properties.
 */
export function discardLateWrites(res: NodeResponse): void {
  Object.assign(res, {
    writeHead: noop,
    setHeader: noop,
    setHeaders: noop,
    appendHeader: noop,
    removeHeader: noop,
    flushHeaders: noop,
    addTrailers: noop,
    writeContinue: noop,
    writeEarlyHints: noop,
    write: accepted,
    end: endLate,
  })
}

/** As discardLateWrites, for a node:http2 stream (the core API). */
export function discardLateStreamWrites(stream: ServerHttp2Stream): void {
  Object.assign(stream, {
    respond: noop,
    additionalHeaders: noop,
    respondWithFD: noop,
    respondWithFile: noop,
    write: accepted,
    end: endLate,
  })
}

/** Whether the guard already answered `res` in its handler's place. */
export const answeredInstead = (res: NodeResponse): boolean => (res as Marked)[DEGRADED] === true

/**
 * Answers in the handler's place (it timed out or threw) with `answer` as `guard.answer` gave it (undefined or
 * null: the plain answer), from clean headers (none the handler set: a length, a cookie), then discards what the
 * handler writes later.
 */
export function answerWith<Req>(
  guard: InboundGuard<Req>,
  res: NodeResponse,
  reason: FallbackReason,
  answer: DegradedAnswer | undefined | null,
): void {
  ;(res as Marked)[DEGRADED] = true
  clearHeaders(res)
  if (answer == null || !guard.fallbackWritten(writeAnswer(res, answer)))
    writeAnswer(res, plainAnswer(reason, answer !== undefined))
  discardLateWrites(res)
}

function timedOut<Req>(guard: InboundGuard<Req>, request: Req, res: NodeResponse, signal: RequestSignal, ms: number) {
  if (res.headersSent || res.writableEnded || responseGone(res)) return // answering already, or nobody to answer
  guard.countTimeout()
  answerWith(guard, res, 'timeout', guard.answer(request, 'timeout'))
  signal.timedOut(ms)
}

/**
 * Answers for the handler if it has not started its response after `ms`; the timer goes when the response ends.
 * The request gets the guard's `signal`: aborted then, or when the client goes away before the response ended.
 */
export function armTimeout<Req>(guard: InboundGuard<Req>, request: Req, res: NodeResponse, ms: number): void {
  const signal = attachSignal(request as object)
  const timer = setTimeout(timedOut<Req>, ms, guard, request, res, signal, ms)
  res.once('finish', () => clearTimeout(timer))
  res.once('close', () => {
    clearTimeout(timer)
    if (!res.writableEnded) signal.clientGone()
  })
}

/** A handler of an admitted request threw or rejected: the fallback answers if it can, else a plain 500. */
export function handlerFailed<Req>(guard: InboundGuard<Req>, request: Req, res: NodeResponse, error: unknown): void {
  if (answeredInstead(res)) return // answered in its place already (a timeout)
  if (res.headersSent) return void res.destroy() // mid-response: the client sees it cut, as frameworks do
  const reason = errorReason(error)
  answerWith(guard, res, reason, guard.answer(request, reason))
}

/**
 * Runs an admitted request's handler with what the guard's options add: dropped if its client is gone (counted),
 * a timeout, the deadline's async context, and (`catchErrors`, for node:http) the fallback for an error it throws.
 */
export function runAdmitted<Req, Res extends NodeResponse>(
  guard: InboundGuard<Req>,
  request: Req,
  res: Res,
  handler: (request: Req, res: Res) => unknown,
  catchErrors: boolean,
): void {
  if (responseGone(res)) return guard.countClientGone()
  if (guard.timesOut) {
    const ms = guard.timeoutOf(request)
    if (ms > 0) armTimeout(guard, request, res, ms)
  }
  const deadline = guard.deadlineAt
  const inContext = guard.propagatesDeadline && deadline === deadline
  if (!catchErrors || guard.fallback === undefined) {
    if (inContext) runWithDeadline(deadline, handler, request, res)
    else handler(request, res)
    return
  }
  let result: unknown
  try {
    result = inContext ? runWithDeadline(deadline, handler, request, res) : handler(request, res)
  } catch (error) {
    return handlerFailed(guard, request, res, error)
  }
  if (result !== null && typeof (result as PromiseLike<unknown>)?.then === 'function') {
    ;(result as PromiseLike<unknown>).then(undefined, (error: unknown) => handlerFailed(guard, request, res, error))
  }
}

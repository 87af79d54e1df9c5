import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from 'http2'

import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { runWithDeadline } from '../../guards/inbound/deadline-context'
import { DEGRADED, discardLateStreamWrites, type Marked, plainAnswer } from '../../guards/inbound/degraded-response'
import { type DegradedAnswer, errorReason, type FallbackReason } from '../../guards/inbound/fallback'
import { awaitSlot } from '../../guards/inbound/await-slot'
import { CALLBACK_FAILED, InboundGuard, QUEUED, type RequestAccess } from '../../guards/inbound/inbound-guard'
import type { InboundGuardOptions } from '../../guards/inbound/inbound-options'
import { streamReleaser } from '../../guards/inbound/response-release'
import { respondShed, withFields } from '../../guards/inbound/shed-reply'
import { attachSignal } from '../../guards/inbound/request-signal'

// HTTP/2's error codes (RFC 9113, section 7; node:http2's constants.NGHTTP2_*), written here because node:http2
// loads tls and crypto, which a process that never serves HTTP/2 should not pay for (docs/guide/install.md).
const NO_ERROR = 0x0
const INTERNAL_ERROR = 0x2

/**
 * What the guard sees of an HTTP/2 stream, and what `priority` and `rateLimit.key` receive: the stream and its
 * request headers. The guard refills one such object for each stream: read it during the call, do not keep it.
 */
export interface Http2StreamRequest {
  stream: ServerHttp2Stream
  headers: IncomingHttpHeaders
}

/** A listener of node:http2's 'stream' event. */
export type StreamListener = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  flags: number,
  rawHeaders: string[],
) => void
export type GuardedStreamListener = StreamListener & { readonly guard: InboundGuard<Http2StreamRequest> }

const streamAccess: RequestAccess<Http2StreamRequest> = {
  header: (request, name) => request.headers[name],
  address: (request) => request.stream.session?.socket?.remoteAddress,
  method: (request) => request.headers[':method'],
  url: (request) => request.headers[':path'],
}

type Respond = (this: ServerHttp2Stream, headers?: OutgoingHttpHeaders, ...rest: unknown[]) => unknown

/** The rate limit's fields added to whatever headers the listener answers the stream with (copied: kept past now). */
function answerWithFields(stream: ServerHttp2Stream, fields: readonly string[]): void {
  const kept = fields.slice()
  for (const name of ['respond', 'respondWithFD', 'respondWithFile'] as const) {
    const own = stream[name] as unknown as Respond
    ;(stream as unknown as Record<string, Respond>)[name] = function (headers, ...rest) {
      return own.call(this, withFields(headers ?? {}, kept), ...rest)
    }
  }
}

/** Responds with `answer`; false when node:http2 refused it (a header it cannot send), with nothing sent. */
function respondAnswer(stream: ServerHttp2Stream, head: boolean, answer: DegradedAnswer): boolean {
  if (stream.destroyed) return true
  try {
    stream.respond({ ...answer.headers, ':status': answer.status }, { endStream: head })
  } catch {
    if (!stream.headersSent) return false
    stream.close(INTERNAL_ERROR) // cannot happen as respond checks first: cut, never hang
    return true
  }
  if (!head) stream.end(answer.body)
  return true
}

/** Answers in the listener's place (it timed out or threw) and discards what it writes later. */
function answerInstead(
  guard: InboundGuard<Http2StreamRequest>,
  request: Http2StreamRequest,
  reason: FallbackReason,
): void {
  const stream = request.stream
  if ((stream as Marked)[DEGRADED] === true || stream.destroyed) return
  if (stream.headersSent) return void stream.close(INTERNAL_ERROR) // mid-response: cut it
  if (reason === 'timeout') guard.countTimeout()
  const answer = guard.answer(request, reason)
  ;(stream as Marked)[DEGRADED] = true
  const head = request.headers[':method'] === 'HEAD'
  if (answer == null || !guard.fallbackWritten(respondAnswer(stream, head, answer)))
    respondAnswer(stream, head, plainAnswer(reason, answer !== undefined))
  discardLateStreamWrites(stream)
}

/** The listener with what the guard's options add: a timeout, the deadline's context, errors to the fallback. */
function runDegraded(
  guard: InboundGuard<Http2StreamRequest>,
  listener: StreamListener,
  args: Parameters<StreamListener>,
): void {
  const [stream, headers] = args
  const request: Http2StreamRequest = { stream, headers } // kept for the timeout and errors: this path allocates
  const ms = guard.timesOut ? guard.timeoutOf(request) : 0
  if (ms > 0) {
    // stream.signal: aborted on the guard's timeout and when the client resets the stream first.
    const signal = attachSignal(stream)
    const timer = setTimeout(() => {
      if (stream.headersSent) return
      answerInstead(guard, request, 'timeout')
      signal.timedOut(ms)
    }, ms)
    stream.once('close', () => {
      clearTimeout(timer)
      if (stream.rstCode !== NO_ERROR) signal.clientGone() // reset: not an end it wrote
    })
  }
  const failed = (error: unknown): void => answerInstead(guard, request, errorReason(error))
  const deadline = guard.deadlineAt
  try {
    const result: unknown =
      guard.propagatesDeadline && deadline === deadline
        ? runWithDeadline(deadline, listener, ...args)
        : listener(...args)
    if (guard.fallback !== undefined && typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
      (result as PromiseLike<unknown>).then(undefined, failed)
  } catch (error) {
    if (guard.fallback === undefined) throw error
    failed(error)
  }
}

/**
 * Wraps a listener of node:http2's core API (the server's 'stream' event): each stream is admitted or answered
 * at once with 503 (overload) or 429 (rate limit), a Retry-After header and a small JSON body, without calling
 * `listener`. An admitted stream's token is released when the listener ends its answer (`end()`, a `respond()` that
 * ends the stream, a file), however long the client takes to read it, or when the stream closes first (either side
 * reset it, or its session died), exactly once; one session holds at most `connectionConcurrency` admitted streams.
 *
 * With `fallback`, refusals, a `timeout` and errors the listener throws get the fallback's answer
 * (docs/guide/degrade.md).
 *
 *   http2.createSecureServer(tls).on('stream', http2StreamGuard(onStream, { limiter: { shared: 'api' } }))
 */
export function http2StreamGuard(
  listener: StreamListener,
  options?: InboundGuardOptions<Http2StreamRequest>,
): GuardedStreamListener {
  if (typeof listener !== 'function')
    throw new InvalidArgumentError('listener', listener, "a listener of the 'stream' event")
  const guard = new InboundGuard(options, streamAccess)
  const bind = streamReleaser(guard)
  const plain = guard.fallback === undefined && !guard.timesOut && !guard.propagatesDeadline
  // One request object for every stream, so that admission allocates nothing.
  const request: Http2StreamRequest = { stream: undefined as never, headers: undefined as never }
  const decided = (
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    flags: number,
    raw: string[],
    token: number,
  ) => {
    const head = headers[':method'] === 'HEAD'
    if (token === CALLBACK_FAILED) return void respondAnswer(stream, head, plainAnswer('error', false))
    if (token < 0) {
      request.stream = stream
      request.headers = headers
      const answer = guard.fallback === undefined ? undefined : guard.answer(request, guard.reasonOf(token))
      request.stream = request.headers = undefined as never
      if (answer && guard.fallbackWritten(respondAnswer(stream, head, answer))) return
      return respondShed(stream, head, token, guard.retryAfter, guard.limitHeaders)
    }
    bind(stream, token, stream.session)
    if (guard.limitHeaders !== undefined) answerWithFields(stream, guard.limitHeaders)
    if (stream.destroyed) return guard.countClientGone() // reset by the client already: no listener runs
    if (plain) listener(stream, headers, flags, raw)
    else runDegraded(guard, listener, [stream, headers, flags, raw])
  }
  const guarded = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, raw: string[]): void => {
    request.stream = stream
    request.headers = headers
    const token = guard.tryAcquire(request, stream.session)
    request.stream = request.headers = undefined as never // the guard keeps nothing of the stream
    if (token !== QUEUED) return decided(stream, headers, flags, raw, token)
    if (stream.destroyed) return guard.countClientGone()
    awaitSlot(guard, stream, (t) => decided(stream, headers, flags, raw, t))
  }
  return Object.assign(guarded, { guard })
}

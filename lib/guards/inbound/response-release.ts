import type { ServerResponse } from 'http'
import type { Http2ServerResponse, ServerHttp2Stream } from 'http2'
import type { Socket } from 'net'

import { DEGRADED } from './degraded-response'
import type { InboundGuard } from './inbound-guard'

// The token rides on the response object itself: one property, no closure and no map entry per request.
const TOKEN = Symbol('bulwark.token')
// Responses of pipelined requests waiting behind an earlier response on the same connection.
const QUEUED = Symbol('bulwark.queued')
const RELEASED = -1

type Holder = { [TOKEN]?: number }
type Tracked = ServerResponse & Holder & { stream?: ServerHttp2Stream; [DEGRADED]?: boolean }
type TrackedSocket = Socket & { [QUEUED]?: Tracked[] }
type TrackedStream = ServerHttp2Stream & Holder & { [DEGRADED]?: boolean }

/**
 * The listener that gives back the token its emitter holds, the first time it is called. The response time counts
 * only for a response sent `whole` and below 500: a 5xx (a gateway answers one at once when its upstream refuses)
 * or an abandoned request says nothing about how long requests take.
 */
function releaseOnce<Req, E extends Holder>(
  guard: InboundGuard<Req>,
  whole: (emitter: E) => boolean,
): (this: E) => void {
  return function done(this: E): void {
    const token = this[TOKEN] as number
    if (token === RELEASED) return
    this[TOKEN] = RELEASED
    guard.release(token, whole(this))
  }
}

// A node:http2 compatibility response reports itself finished and 200 when its stream was reset before it was
// answered: its stream's `aborted` tells. An answer the guard gave in the handler's place (DEGRADED) is not timed.
const wholeResponse = (res: Tracked): boolean =>
  res.writableFinished && res.statusCode < 500 && !res.stream?.aborted && res[DEGRADED] !== true
const wholeStream = (stream: TrackedStream): boolean =>
  !stream.aborted &&
  stream.writableFinished &&
  Number(stream.sentHeaders?.[':status']) < 500 &&
  stream[DEGRADED] !== true

/**
 * Returns `bind(res, token)`: releases `token` to `guard` when `res` finishes or its connection closes, whichever
 * comes first, exactly once. The listeners are functions made here, once per adapter. Works for node:http's
 * responses and node:http2's compatibility responses (which emit 'close' when their stream is reset or their
 * session dies; they have no pipelining).
 */
export function responseReleaser<Req>(
  guard: InboundGuard<Req>,
): (res: ServerResponse | Http2ServerResponse, token: number) => void {
  const done = releaseOnce(guard, wholeResponse)
  // node:http emits nothing on a queued response whose connection dies: its requests are released here.
  function connectionClosed(this: TrackedSocket): void {
    const queued = this[QUEUED] as Tracked[]
    this[QUEUED] = undefined
    for (const res of queued) done.call(res)
  }
  return (response: ServerResponse | Http2ServerResponse, token: number): void => {
    if (!guard.tracksInFlight) return
    const res = response as Tracked
    res[TOKEN] = token
    res.on('finish', done)
    res.on('close', done)
    const socket = (res.socket ?? res.req?.socket) as TrackedSocket | null | undefined
    // Already over (a connection that closed before the handler ran): no event will come.
    if (res.destroyed || res.writableFinished || socket?.destroyed) return done.call(res)
    if (res.socket === null && socket) {
      const queued = socket[QUEUED]
      if (queued === undefined) {
        socket[QUEUED] = [res]
        socket.once('close', connectionClosed)
      } else {
        socket[QUEUED] = queued.filter((r) => r[TOKEN] !== RELEASED) // keep the list as short as the pipeline
        ;(socket[QUEUED] as Tracked[]).push(res)
      }
    }
  }
}

/**
 * Returns `bind(stream, token)` for node:http2's core API: releases `token` when the stream finishes or closes
 * (it ended, either side reset it, or its session died), exactly once.
 */
export function streamReleaser<Req>(guard: InboundGuard<Req>): (stream: ServerHttp2Stream, token: number) => void {
  const done = releaseOnce(guard, wholeStream)
  return (stream: TrackedStream, token: number): void => {
    if (!guard.tracksInFlight) return
    stream[TOKEN] = token
    stream.on('finish', done)
    stream.on('close', done)
    if (stream.destroyed) done.call(stream) // closed before the listener ran: no event will come
  }
}

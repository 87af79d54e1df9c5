import type { ServerResponse } from 'http'
import type { Http2ServerResponse, ServerHttp2Stream } from 'http2'
import type { Socket } from 'net'

import type { ConnectionCount } from './connection-count'
import { DEGRADED } from './degraded-response'
import type { InboundGuard } from './inbound-guard'

// The token rides on the response object itself: one property, no closure and no map entry per request.
const TOKEN = Symbol('bulwark.token')
// The connection whose count of admitted requests this one is in (with `connectionConcurrency`).
const CONNECTION = Symbol('bulwark.connection')
// An `end` the response had of its own before the guard's (another middleware's), which the guard's calls.
const OWN_END = Symbol('bulwark.ownEnd')
// Responses of pipelined requests waiting behind an earlier response on the same connection.
const QUEUED = Symbol('bulwark.queued')
const RELEASED = -1

type End = (...args: unknown[]) => unknown
type Holder = { [TOKEN]?: number; [CONNECTION]?: object; [OWN_END]?: End; end: End }
type Tracked = ServerResponse & Holder & { stream?: ServerHttp2Stream; [DEGRADED]?: boolean }
type TrackedSocket = Socket & { [QUEUED]?: Tracked[] }
type TrackedStream = ServerHttp2Stream & Holder & { [DEGRADED]?: boolean }

/**
 * The listeners of one adapter: `done` gives back the token its emitter holds, the first time it is called (the
 * handler ended its answer, or the client left first); `closed` also gives back its place on its connection, once
 * the response is over (sent, or cut), so that `connectionConcurrency` bounds the answers a client leaves unread too.
 * The response time counts only for a response ended `whole` and below 500: a 5xx (a gateway answers one at once
 * when its upstream refuses) or an abandoned request says nothing about how long requests take.
 */
function releasers<Req, E extends Holder>(
  guard: InboundGuard<Req>,
  whole: (emitter: E) => boolean,
): { done: (this: E) => void; closed: (this: E) => void } {
  const connections = guard.connections as ConnectionCount
  function done(this: E): void {
    const token = this[TOKEN] as number
    if (token === RELEASED) return
    this[TOKEN] = RELEASED
    guard.release(token, whole(this))
  }
  function closed(this: E): void {
    done.call(this)
    const connection = this[CONNECTION]
    if (connection === undefined) return
    this[CONNECTION] = undefined
    connections.giveBack(connection)
  }
  return { done, closed }
}

/**
 * The `end` the guard gives a response or stream whose ending emits nothing at once: it ends it as before, then
 * calls `done` on it. The handler has finished its answer when it calls `end()`, however long the client takes to
 * read it (docs/guide/trust.md).
 */
function endThen<E extends Holder>(done: (this: E) => void): End {
  return function end(this: E): unknown {
    const own = this[OWN_END] ?? (Object.getPrototypeOf(this) as Holder).end
    // eslint-disable-next-line prefer-rest-params -- passed on as given, without an array per call
    const result = own.apply(this, arguments as unknown as unknown[])
    done.call(this)
    return result
  }
}

function hookEnd(target: Holder, end: End): void {
  if (Object.hasOwn(target, 'end')) target[OWN_END] = target.end
  target.end = end
}

/** Counts the request in its connection's admitted requests (with `connectionConcurrency`). */
function holdPlace(connections: ConnectionCount | undefined, target: Holder, connection: object | undefined): void {
  if (connections === undefined || connection === undefined) return
  connections.take(connection)
  target[CONNECTION] = connection
}

// A node:http2 compatibility response reports itself finished and 200 when its stream was reset before it was
// answered: its stream's `aborted` tells. An answer the guard gave in the handler's place (DEGRADED) is not timed.
const wholeResponse = (res: Tracked): boolean =>
  res.writableEnded && res.statusCode < 500 && !res.stream?.aborted && res[DEGRADED] !== true
const wholeStream = (stream: TrackedStream): boolean =>
  !stream.aborted && stream.writableEnded && Number(stream.sentHeaders?.[':status']) < 500 && stream[DEGRADED] !== true

/** What `bind` of responseReleaser also offers: `answered(res)`, for a framework that sends a finished answer slowly. */
export interface ResponseBinder {
  (res: ServerResponse | Http2ServerResponse, token: number, connection?: object): void
  /**
   * The framework holds `res`'s whole answer and sends it now, however slowly: its token goes back at once (its
   * place on the connection when the response is over).
   */
  answered(res: ServerResponse | Http2ServerResponse): void
}

/** The connection an admitted request of node:http or node:http2's compatibility API counts in: socket or session. */
export function connectionOf(req: { socket: object; stream?: ServerHttp2Stream }): object | undefined {
  const stream = req.stream
  return stream === undefined ? req.socket : stream.session
}

/**
 * Returns `bind(res, token, connection)`: releases `token` to `guard` when the handler ends `res` (node:http emits
 * 'prefinish' inside `end()` for a response that has its socket; a response queued behind a pipelined one, and a
 * node:http2 compatibility response, get the guard's `end`), or when its connection closes first, exactly once; its
 * place on `connection` when it closes. The listeners are functions made here, once per adapter.
 */
export function responseReleaser<Req>(guard: InboundGuard<Req>): ResponseBinder {
  const { done, closed } = releasers(guard, wholeResponse)
  const endThenRelease = endThen(done)
  const connections = guard.connections
  // node:http emits nothing on a queued response whose connection dies: its requests are released here.
  function connectionClosed(this: TrackedSocket): void {
    const queued = this[QUEUED] as Tracked[]
    this[QUEUED] = undefined
    for (const res of queued) closed.call(res)
  }
  const bind = (response: ServerResponse | Http2ServerResponse, token: number, connection?: object): void => {
    if (!guard.tracksInFlight) return
    const res = response as Tracked
    res[TOKEN] = token
    holdPlace(connections, res, connection)
    res.on('close', closed)
    const stream = res.stream
    if (stream !== undefined) {
      // node:http2's compatibility API: 'close' when the stream is reset or its session dies; no pipelining.
      hookEnd(res, endThenRelease)
      if (stream.destroyed) closed.call(res)
      return
    }
    res.on('prefinish', done)
    const socket = (res.socket ?? res.req?.socket) as TrackedSocket | null | undefined
    // Already over (a connection that closed before the handler ran): no event will come.
    if (res.destroyed || res.writableFinished || socket?.destroyed) return closed.call(res)
    if (res.socket === null && socket) {
      hookEnd(res, endThenRelease) // its 'prefinish' waits until the responses before it have been sent
      const queued = socket[QUEUED]
      if (queued === undefined) {
        socket[QUEUED] = [res]
        socket.once('close', connectionClosed)
      } else {
        // Keep the list as short as the pipeline; a released response's place dies with the connection's count.
        socket[QUEUED] = queued.filter((r) => r[TOKEN] !== RELEASED)
        ;(socket[QUEUED] as Tracked[]).push(res)
      }
    }
  }
  const answered = (response: ServerResponse | Http2ServerResponse): void => {
    const res = response as Tracked
    const token = res[TOKEN]
    if (token === undefined || token === RELEASED) return
    res[TOKEN] = RELEASED
    guard.release(token, res.statusCode < 500 && !res.stream?.aborted && res[DEGRADED] !== true)
  }
  return Object.assign(bind, { answered })
}

/**
 * Returns `bind(stream, token, session)` for node:http2's core API: releases `token` when the handler ends the
 * stream (`end()`, a `respond()` that ends it, a file it responds with) or when it closes first (either side reset
 * it, or its session died), exactly once; its place on `session` when it closes.
 */
export function streamReleaser<Req>(
  guard: InboundGuard<Req>,
): (stream: ServerHttp2Stream, token: number, session?: object) => void {
  const { done, closed } = releasers(guard, wholeStream)
  const endThenRelease = endThen(done)
  const connections = guard.connections
  return (s: ServerHttp2Stream, token: number, session?: object): void => {
    if (!guard.tracksInFlight) return
    const stream = s as TrackedStream
    stream[TOKEN] = token
    holdPlace(connections, stream, session)
    stream.on('close', closed)
    hookEnd(stream, endThenRelease)
    if (stream.destroyed) closed.call(stream) // closed before the listener ran: no event will come
  }
}

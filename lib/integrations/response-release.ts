import type { ServerResponse } from 'http'
import type { Socket } from 'net'

import type { InboundGuard } from './inbound-guard'

// The token rides on the response object itself: one property, no closure and no map entry per request.
const TOKEN = Symbol('bulwark.token')
// Responses of pipelined requests waiting behind an earlier response on the same connection.
const QUEUED = Symbol('bulwark.queued')
const RELEASED = -1

type Tracked = ServerResponse & { [TOKEN]?: number }
type TrackedSocket = Socket & { [QUEUED]?: Tracked[] }

/**
 * Returns `bind(res, token)`: releases `token` to `guard` when `res` finishes or its connection closes, whichever
 * comes first, exactly once. The listeners are functions made here, once per adapter. The response time counts
 * only for a response sent whole and below 500: a 5xx (a gateway answers one at once when its upstream refuses)
 * or an abandoned request says nothing about how long requests take.
 */
export function responseReleaser<Req>(guard: InboundGuard<Req>): (res: ServerResponse, token: number) => void {
  function done(this: Tracked): void {
    const token = this[TOKEN] as number
    if (token === RELEASED) return
    this[TOKEN] = RELEASED
    guard.release(token, this.writableFinished && this.statusCode < 500)
  }
  // node:http emits nothing on a queued response whose connection dies: its requests are released here.
  function connectionClosed(this: TrackedSocket): void {
    const queued = this[QUEUED] as Tracked[]
    this[QUEUED] = undefined
    for (const res of queued) done.call(res)
  }
  return (res: Tracked, token: number): void => {
    if (!guard.tracksInFlight) return
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

import type { ServerResponse } from 'http'

import type { InboundGuard } from './inbound-guard'

// The token rides on the response object itself: one property, no closure and no map entry per request.
const TOKEN = Symbol('bulwark.token')
const RELEASED = -1

type Tracked = ServerResponse & { [TOKEN]?: number }

/**
 * Returns `bind(res, token)`: releases `token` to `guard` when `res` finishes or its connection closes, whichever
 * comes first, exactly once. The two listeners are one function made here, once per adapter.
 */
export function responseReleaser<Req>(guard: InboundGuard<Req>): (res: ServerResponse, token: number) => void {
  function done(this: Tracked): void {
    const token = this[TOKEN] as number
    if (token === RELEASED) return
    this[TOKEN] = RELEASED
    guard.release(token)
  }
  return (res: Tracked, token: number): void => {
    if (!guard.tracksInFlight) return
    res[TOKEN] = token
    res.on('finish', done)
    res.on('close', done)
    // Already over (a connection that closed before the handler ran): 'close' will not come again.
    if (res.destroyed || res.writableFinished) done.call(res)
  }
}

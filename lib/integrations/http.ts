import type { IncomingMessage, ServerResponse } from 'http'

import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { InboundGuard, type RequestAccess } from './inbound-guard'
import type { InboundGuardOptions } from './inbound-options'
import { responseReleaser } from './response-release'
import { writeShed } from './shed-reply'

/** Reads a node:http request: its headers and the socket's peer address. */
export const nodeRequestAccess: RequestAccess<IncomingMessage> = {
  header: (req, name) => req.headers[name],
  address: (req) => req.socket.remoteAddress,
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void
export type GuardedListener = RequestListener & { readonly guard: InboundGuard<IncomingMessage> }

/**
 * Wraps a node:http request listener: each request is admitted or answered at once with 503 (overload) or 429
 * (rate limit), a Retry-After header and a small JSON body, without calling `listener`.
 *
 *   http.createServer(httpGuard((req, res) => res.end('ok'), { limiter: { shared: 'api' } }))
 */
export function httpGuard(listener: RequestListener, options?: InboundGuardOptions<IncomingMessage>): GuardedListener {
  if (typeof listener !== 'function')
    throw new InvalidArgumentError('listener', listener, 'a request listener function')
  const guard = new InboundGuard(options, nodeRequestAccess)
  const bind = responseReleaser(guard)
  const guarded = (req: IncomingMessage, res: ServerResponse): void => {
    const token = guard.acquire(req)
    if (token < 0) return writeShed(res, token, guard.retryAfter)
    bind(res, token)
    listener(req, res)
  }
  return Object.assign(guarded, { guard })
}

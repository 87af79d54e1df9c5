import type { IncomingMessage, ServerResponse } from 'http'
import type { Http2ServerRequest, Http2ServerResponse } from 'http2'

import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { awaitSlot } from '../../guards/inbound/await-slot'
import { InboundGuard, QUEUED, type RequestAccess } from '../../guards/inbound/inbound-guard'
import type { InboundGuardOptions } from '../../guards/inbound/inbound-options'
import { refuse, responseGone, runAdmitted } from '../../guards/inbound/degraded-response'
import { connectionOf, responseReleaser } from '../../guards/inbound/response-release'
import { setFields } from '../../guards/inbound/rate-limit-headers'

/** A request of node:http, or of node:http2's compatibility API (which has the same headers and socket). */
export type NodeRequest = IncomingMessage | Http2ServerRequest
export type NodeResponse = ServerResponse | Http2ServerResponse

/** Reads a node:http or node:http2 compatibility request: its headers and the socket's peer address. */
export const nodeRequestAccess: RequestAccess<NodeRequest> = {
  header: (req, name) => req.headers[name],
  address: (req) => req.socket.remoteAddress,
  method: (req) => req.method,
  url: (req) => req.url,
}

export type RequestListener<Req extends NodeRequest = IncomingMessage, Res extends NodeResponse = ServerResponse> = (
  req: Req,
  res: Res,
) => void
export type GuardedListener<
  Req extends NodeRequest = IncomingMessage,
  Res extends NodeResponse = ServerResponse,
> = RequestListener<Req, Res> & { readonly guard: InboundGuard<Req> }

/**
 * Wraps a request listener of node:http, or of node:http2's compatibility API (`http2.createServer`,
 * `http2.createSecureServer`): each request is admitted or answered at once with 503 (overload) or 429 (rate
 * limit), a Retry-After header and a small JSON body, without calling `listener` (with `maxWait`, a refused
 * request first waits for a slot: docs/rules/queue.md). An admitted request's token is
 * released when the listener ends its response (`res.end()`), however long the client takes to read it, or when
 * its connection closes first (over HTTP/2: its stream was reset, or its session died); one connection holds at most
 * `connectionConcurrency` admitted requests (docs/guide/trust.md).
 * With `fallback`, refusals, a `timeout` and errors the listener throws (or rejects with) get the fallback's answer
 * (docs/guide/degrade.md).
 *
 *   http.createServer(httpGuard((req, res) => res.end('ok'), { limiter: { shared: 'api' } }))
 */
export function httpGuard<Req extends NodeRequest = IncomingMessage, Res extends NodeResponse = ServerResponse>(
  listener: RequestListener<Req, Res>,
  options?: InboundGuardOptions<Req>,
): GuardedListener<Req, Res> {
  if (typeof listener !== 'function')
    throw new InvalidArgumentError('listener', listener, 'a request listener function')
  const guard = new InboundGuard<Req>(options, nodeRequestAccess)
  const bind = responseReleaser(guard)
  const decided = (req: Req, res: Res, token: number, connection: object | undefined): void => {
    if (token < 0) return refuse(guard, req, res, token)
    bind(res, token, connection)
    if (guard.limitHeaders !== undefined) setFields(res, guard.limitHeaders)
    runAdmitted(guard, req, res, listener, true)
  }
  const guarded = (req: Req, res: Res): void => {
    const connection = connectionOf(req)
    const token = guard.tryAcquire(req, connection)
    if (token !== QUEUED) return decided(req, res, token, connection)
    if (responseGone(res)) return guard.countClientGone()
    awaitSlot(guard, res, (t) => decided(req, res, t, connection))
  }
  return Object.assign(guarded, { guard })
}

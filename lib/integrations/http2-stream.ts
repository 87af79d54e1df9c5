import type { IncomingHttpHeaders, ServerHttp2Stream } from 'http2'

import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { InboundGuard, type RequestAccess } from './inbound-guard'
import type { InboundGuardOptions } from './inbound-options'
import { streamReleaser } from './response-release'
import { respondShed } from './shed-reply'

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
}

/**
 * Wraps a listener of node:http2's core API (the server's 'stream' event): each stream is admitted or answered
 * at once with 503 (overload) or 429 (rate limit), a Retry-After header and a small JSON body, without calling
 * `listener`. An admitted stream's token is released when the stream finishes or closes, however it ends (its
 * response ended, either side reset it, or its session died), exactly once.
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
  // One request object for every stream, so that admission allocates nothing.
  const request: Http2StreamRequest = { stream: undefined as never, headers: undefined as never }
  const guarded = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, raw: string[]): void => {
    request.stream = stream
    request.headers = headers
    const token = guard.tryAcquire(request)
    request.stream = request.headers = undefined as never // the guard keeps nothing of the stream
    if (token < 0) return respondShed(stream, headers[':method'] === 'HEAD', token, guard.retryAfter)
    bind(stream, token)
    listener(stream, headers, flags, raw)
  }
  return Object.assign(guarded, { guard })
}

import type { IncomingMessage, ServerResponse } from 'http'

import { InboundGuard, type RequestAccess } from './inbound-guard'
import type { InboundGuardOptions } from './inbound-options'
import { responseReleaser } from './response-release'
import { writeShed } from './shed-reply'

/** What the middleware reads of an Express (or Connect) request; `ip` honours Express's `trust proxy`. */
export type ExpressRequest = IncomingMessage & { ip?: string }

const expressAccess: RequestAccess<ExpressRequest> = {
  header: (req, name) => req.headers[name],
  address: (req) => req.ip ?? req.socket.remoteAddress,
}

export type ExpressMiddleware = ((
  req: ExpressRequest,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void) & {
  readonly guard: InboundGuard<ExpressRequest>
}

/**
 * Express / Connect middleware: admits the request (next()) or answers it at once with 503 or 429, a Retry-After
 * header and a JSON body, without calling the next handler.
 *
 *   app.use(expressGuard({ limiter: { shared: 'api' } }))
 */
export function expressGuard(options?: InboundGuardOptions<ExpressRequest>): ExpressMiddleware {
  const guard = new InboundGuard(options, expressAccess)
  const bind = responseReleaser(guard)
  const middleware = (req: ExpressRequest, res: ServerResponse, next: (error?: unknown) => void): void => {
    const token = guard.tryAcquire(req)
    if (token < 0) return writeShed(res, token, guard.retryAfter)
    bind(res, token)
    next()
  }
  return Object.assign(middleware, { guard })
}

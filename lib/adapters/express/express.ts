import type { IncomingMessage, ServerResponse } from 'http'

import { awaitSlot } from '../../guards/inbound/await-slot'
import { InboundGuard, QUEUED, type RequestAccess } from '../../guards/inbound/inbound-guard'
import type { InboundGuardOptions } from '../../guards/inbound/inbound-options'
import { answeredInstead, answerWith, refuse, responseGone, runAdmitted } from '../../guards/inbound/degraded-response'
import { errorReason } from '../../guards/inbound/fallback'
import { responseReleaser } from '../../guards/inbound/response-release'
import { setFields } from '../../guards/inbound/rate-limit-headers'

/** What the middleware reads of an Express (or Connect) request; `ip` honours Express's `trust proxy`. */
export type ExpressRequest = IncomingMessage & { ip?: string; originalUrl?: string }

const expressAccess: RequestAccess<ExpressRequest> = {
  header: (req, name) => req.headers[name],
  address: (req) => req.ip ?? req.socket.remoteAddress,
  method: (req) => req.method,
  // The URL as it came: a router mounted on a path rewrites req.url while it runs.
  url: (req) => req.originalUrl ?? req.url,
}

/** Express's `next`: called with nothing to go on, with an error to skip to the error handlers. */
export type ExpressNext = (error?: unknown) => void

export type ExpressMiddleware = ((req: ExpressRequest, res: ServerResponse, next: ExpressNext) => void) & {
  readonly guard: InboundGuard<ExpressRequest>
  /**
   * Error-handling middleware for the end of the chain (`app.use(guard.errors)`): a route's error gets the
   * fallback's answer (reason 'error', or 'breaker-open'); without a fallback answer it goes on to Express's own.
   */
  readonly errors: (error: unknown, req: ExpressRequest, res: ServerResponse, next: ExpressNext) => void
}

/**
 * Express / Connect middleware: admits the request (next()) or answers it at once with 503 or 429, a Retry-After
 * header and a JSON body, without calling the next handler (with `maxWait`, a refused request first waits for a slot:
 * docs/rules/queue.md).
 *
 *   app.use(expressGuard({ limiter: { shared: 'api' } }))
 */
export function expressGuard(options?: InboundGuardOptions<ExpressRequest>): ExpressMiddleware {
  const guard = new InboundGuard(options, expressAccess)
  const bind = responseReleaser(guard)
  const decided = (req: ExpressRequest, res: ServerResponse, next: ExpressNext, token: number): void => {
    if (token < 0) return refuse(guard, req, res, token)
    bind(res, token, req.socket)
    if (guard.limitHeaders !== undefined) setFields(res, guard.limitHeaders)
    runAdmitted(guard, req, res, () => next(), false)
  }
  const middleware = (req: ExpressRequest, res: ServerResponse, next: ExpressNext): void => {
    const token = guard.tryAcquire(req, req.socket)
    if (token !== QUEUED) return decided(req, res, next, token)
    if (responseGone(res)) return guard.countClientGone()
    awaitSlot(guard, res, (t) => decided(req, res, next, t))
  }
  const errors = (error: unknown, req: ExpressRequest, res: ServerResponse, next: ExpressNext): void => {
    if (answeredInstead(res)) return // a timeout answered already: the late error goes nowhere
    if (guard.fallback === undefined || res.headersSent) return next(error)
    const reason = errorReason(error)
    const answer = guard.answer(req, reason)
    if (answer === undefined) return next(error) // the fallback chose Express's own error answer
    answerWith(guard, res, reason, answer)
  }
  return Object.assign(middleware, { guard, errors })
}

import type { IncomingMessage, ServerResponse } from 'http'

import { InboundGuard, type RequestAccess } from './inbound-guard'
import type { InboundGuardOptions } from './inbound-options'
import { responseReleaser } from './response-release'
import { JSON_TYPE, retryAfterText, shedReply } from './shed-reply'

/** What the middleware reads and writes of a Koa context; `ip` honours Koa's `app.proxy`. */
export interface KoaContextLike {
  req: IncomingMessage
  res: ServerResponse
  ip?: string
  status: number
  type: string
  body: unknown
  set(field: string, value: string): void
}

const koaAccess: RequestAccess<KoaContextLike> = {
  header: (ctx, name) => ctx.req.headers[name],
  address: (ctx) => ctx.ip ?? ctx.req.socket.remoteAddress,
}

export type KoaMiddleware = ((ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<unknown> | undefined) & {
  readonly guard: InboundGuard<KoaContextLike>
}

/**
 * Koa middleware: admits the request (`next()`) or answers it with 503 or 429, a Retry-After header and a JSON
 * body through the context, without calling the downstream middleware.
 *
 *   app.use(koaGuard({ limiter: { shared: 'api' } }))
 */
export function koaGuard(options?: InboundGuardOptions<KoaContextLike>): KoaMiddleware {
  const guard = new InboundGuard(options, koaAccess)
  const bind = responseReleaser(guard)
  const middleware = (ctx: KoaContextLike, next: () => Promise<unknown>): Promise<unknown> | undefined => {
    const token = guard.tryAcquire(ctx)
    if (token >= 0) {
      bind(ctx.res, token)
      return next() // no async wrapper: the downstream promise is returned as it is
    }
    const r = shedReply(token)
    ctx.status = r.status
    ctx.set('Retry-After', retryAfterText(guard.retryAfter))
    ctx.type = JSON_TYPE
    ctx.body = r.body
    return undefined
  }
  return Object.assign(middleware, { guard })
}

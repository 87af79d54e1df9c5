import type { IncomingMessage, ServerResponse } from 'http'

import { InboundGuard, type RequestAccess } from './inbound-guard'
import type { InboundGuardOptions } from './inbound-options'
import { responseReleaser } from './response-release'
import { JSON_TYPE, retryAfterText, shedReply } from './shed-reply'

/** What the plugin reads of a Fastify request; `ip` honours Fastify's `trustProxy`. */
export interface FastifyRequestLike {
  headers: IncomingMessage['headers']
  ip?: string
  raw: IncomingMessage
}

interface FastifyReplyLike {
  raw: ServerResponse
  code(status: number): FastifyReplyLike
  header(name: string, value: string): FastifyReplyLike
  send(body: string): unknown
}

/** The parts of a Fastify instance the plugin uses (Fastify 4 and 5). */
export interface FastifyInstanceLike {
  addHook(name: string, hook: (...args: any[]) => void): unknown
  decorate?(name: string, value: unknown): unknown
  hasDecorator?(name: string): boolean
}

const fastifyAccess: RequestAccess<FastifyRequestLike> = {
  header: (request, name) => request.headers[name],
  address: (request) => request.ip ?? request.raw.socket.remoteAddress,
}

export type FastifyGuardOptions = InboundGuardOptions<FastifyRequestLike>

/**
 * A Fastify plugin: an `onRequest` hook that admits the request or answers it at once with 503 or 429, a
 * Retry-After header and a JSON body, so that no later hook, parser or handler runs. Not encapsulated (it applies
 * to the whole instance, as fastify-plugin would make it); the guard is decorated as `fastify.bulwark`, and a
 * limiter it created from options is closed with the instance.
 *
 *   await app.register(fastifyGuard, { limiter: { shared: 'api' } })
 */
export function fastifyGuard(
  fastify: FastifyInstanceLike,
  options: FastifyGuardOptions | undefined,
  done: (error?: Error) => void,
): void {
  let guard: InboundGuard<FastifyRequestLike>
  try {
    guard = new InboundGuard(options, fastifyAccess)
  } catch (error) {
    return done(error as Error)
  }
  const bind = responseReleaser(guard)
  fastify.addHook('onRequest', (request: FastifyRequestLike, reply: FastifyReplyLike, next: () => void): void => {
    const token = guard.tryAcquire(request)
    if (token >= 0) {
      bind(reply.raw, token)
      return next()
    }
    // Answering from the hook without calling next() ends the request here.
    const r = shedReply(token)
    reply
      .code(r.status)
      .header('content-type', JSON_TYPE)
      .header('retry-after', retryAfterText(guard.retryAfter))
      .send(r.body)
  })
  fastify.addHook('onClose', (_instance: unknown, closed: () => void): void => {
    guard.close()
    closed()
  })
  if (fastify.decorate && !fastify.hasDecorator?.('bulwark')) fastify.decorate('bulwark', guard)
  done()
}

// What fastify-plugin sets: skip encapsulation (the hook applies to every route), a name, the supported versions.
Object.assign(fastifyGuard, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'bulwark',
  [Symbol.for('plugin-meta')]: { name: 'bulwark', fastify: '4.x || 5.x' },
})

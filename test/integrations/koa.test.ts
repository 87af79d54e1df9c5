import Koa from 'koa'
import { describe, expect, it } from 'vitest'

import { koaGuard } from '../../lib/index'
import { controlledLimiter, get, inboundScenarios, serving, type StartServer } from './inbound-scenarios'

const start: StartServer = async (guard, app) => {
  const server = new Koa()
    .use(koaGuard(guard))
    .use(async (ctx) => {
      ctx.body = await app()
    })
    .listen(0, '127.0.0.1')
  return serving(server)
}

describe('koaGuard (Koa)', () => {
  inboundScenarios(start)

  it('lets upstream middleware see the shed answer (it goes through the context)', async () => {
    const c = controlledLimiter(2)
    const statuses: number[] = []
    const app = new Koa()
    app.use(async (ctx, next) => {
      await next()
      statuses.push(ctx.status)
    })
    app.use(koaGuard({ limiter: c.limiter }))
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    const { port, close } = await serving(app.listen(0, '127.0.0.1'))
    await get(port)
    c.hold(3)
    c.signal.load = 900
    const shed = await get(port)
    expect(shed.headers['retry-after']).toBe('1')
    expect(statuses).toEqual([200, 503])
    await close()
    c.releaseHeld()
    c.limiter.close()
  })
})

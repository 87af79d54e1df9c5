import * as http2 from 'http2'
import Koa3 from 'koa'
import { describe, expect, it } from 'vitest'

import { koaGuard } from '../../lib/entries/koa'
import { http2Client, serving2 } from './http2-client'
import {
  type AppHandler,
  controlledLimiter,
  get,
  inboundScenarios,
  serving,
  type StartServer,
} from './inbound-scenarios'

// Koa 3 and, through the npm alias koa-v2, Koa 2: the same tests against each.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Koa2 = require('koa-v2') as typeof Koa3
const majors: Array<[string, typeof Koa3]> = [
  ['3', Koa3],
  ['2', Koa2],
]

for (const [major, Koa] of majors) {
  const guarded = (guard: Parameters<typeof koaGuard>[0], app: AppHandler) => {
    const middleware = koaGuard(guard)
    const koa = new Koa().use(middleware).use(async (ctx) => {
      ctx.body = await app((ctx.req as { signal?: AbortSignal }).signal, (name, value) => ctx.set(name, value))
    })
    return { koa, stats: () => middleware.guard.stats() }
  }
  const start: StartServer = async (guard, app) => {
    const { koa, stats } = guarded(guard, app)
    return { ...(await serving(koa.listen(0, '127.0.0.1'))), stats }
  }

  describe(`koaGuard (Koa ${major}, HTTP/2)`, () => {
    inboundScenarios(async (guard, app) => {
      const { koa, stats } = guarded(guard, app)
      return { ...(await serving2(http2.createServer(koa.callback()))), stats }
    }, http2Client)
  })

  describe(`koaGuard (Koa ${major})`, () => {
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
}

import express from 'express'
import { describe, expect, it } from 'vitest'

import { expressGuard } from '../../lib/index'
import { controlledLimiter, get, inboundScenarios, serving, type StartServer } from './inbound-scenarios'

const start: StartServer = async (guard, app) => {
  const server = express()
    .use(expressGuard(guard))
    .use((_req, res) => {
      app().then((body) => res.send(body))
    })
    .listen(0, '127.0.0.1')
  return serving(server)
}

describe('expressGuard (Express)', () => {
  inboundScenarios(start)

  it("keys the rate limit by req.ip, which follows Express's trust proxy setting", async () => {
    const c = controlledLimiter(20)
    const seen: string[] = []
    const perClient = { tryAcquire: (key: string) => (seen.push(key), true) }
    const app = express()
      .set('trust proxy', true)
      .use(expressGuard({ limiter: c.limiter, rateLimit: { limiter: perClient, key: (req) => req.ip ?? '' } }))
    app.use((_req, res) => res.send('ok'))
    const { port, close } = await serving(app.listen(0, '127.0.0.1'))
    await get(port, { 'x-forwarded-for': '203.0.113.9' })
    expect(seen).toEqual(['203.0.113.9'])
    await close()
    c.limiter.close()
  })
})

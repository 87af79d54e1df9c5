import express5 from 'express'
import { describe, expect, it } from 'vitest'

import { expressGuard } from '../../lib/index'
import { controlledLimiter, get, inboundScenarios, serving, type StartServer } from './inbound-scenarios'

// Express 5 and, through the npm alias express-v4, Express 4: the same tests against each.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const express4 = require('express-v4') as typeof express5
const majors: Array<[string, typeof express5]> = [
  ['5', express5],
  ['4', express4],
]

for (const [major, express] of majors) {
  const start: StartServer = async (guard, app) => {
    const server = express()
      .use(expressGuard(guard))
      .use((_req, res) => {
        app().then((body) => res.send(body))
      })
      .listen(0, '127.0.0.1')
    return serving(server)
  }

  describe(`expressGuard (Express ${major})`, () => {
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
}

import express5 from 'express'
import { describe, expect, it } from 'vitest'

import { expressGuard } from '../../lib/entries/express'
import { waitFor } from '../helpers/wait-for'
import { controlledLimiter, get, http1Client, inboundScenarios, serving, type StartServer } from './inbound-scenarios'

// Express 5 and, through the npm alias express-v4, Express 4: the same tests against each.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const express4 = require('express-v4') as typeof express5
const majors: Array<[string, typeof express5]> = [
  ['5', express5],
  ['4', express4],
]

for (const [major, express] of majors) {
  const start: StartServer = async (guard, app) => {
    const guarded = expressGuard(guard)
    const server = express()
      .use(guarded)
      .use((_req, res, next) => {
        const setHeader = (name: string, value: string) => void res.set(name, value)
        app((_req as { signal?: AbortSignal }).signal, setHeader).then((body) => res.send(body), next)
      })
      .use(guarded.errors)
      .listen(0, '127.0.0.1')
    return { ...(await serving(server)), stats: () => guarded.guard.stats() }
  }

  describe(`expressGuard (Express ${major})`, () => {
    inboundScenarios(start)

    it('matches routes on the URL as it came, under a router mounted on a path', async () => {
      const c = controlledLimiter(10)
      const router = express.Router().get('/users/:id', (_req, res) => void res.send('user'))
      const guarded = expressGuard({ limiter: c.limiter, routes: { 'GET /api/users/:id': { priority: 'critical' } } })
      const { port, close } = await serving(express().use(guarded).use('/api', router).listen(0, '127.0.0.1'))
      c.hold(11) // shares of 10: normal 10, critical 12
      c.signal.load = 900
      expect((await get(port, {}, '/api/users/7')).status).toBe(200)
      expect((await get(port, {}, '/api/other')).status).toBe(503)
      await close()
      c.releaseHeld()
      c.limiter.close()
    })

    it('drops, before the handler, a request whose client left while an earlier middleware held it', async () => {
      const c = controlledLimiter(20)
      let letThrough: () => void = () => undefined
      const held = new Promise<void>((r) => (letThrough = r))
      let reached = 0
      let calls = 0
      const guarded = expressGuard({ limiter: c.limiter })
      const app = express()
        .use((_req, _res, next) => void (reached++, held.then(() => next())))
        .use(guarded)
        .use((_req, res) => void (calls++, res.send('ok')))
      const listening = app.listen(0, '127.0.0.1')
      let closed = 0
      listening.on('connection', (socket) => socket.on('close', () => closed++))
      const { close, port } = await serving(listening)
      const request = http1Client.start(port, '/work')
      await waitFor(() => reached === 1, { what: 'the request to reach the first middleware' })
      request.abort()
      await waitFor(() => closed === 1, { what: 'the server to see the connection close' })
      letThrough()
      await waitFor(() => guarded.guard.stats().clientGone === 1, { what: 'the gone client to be counted' })
      expect(calls).toBe(0)
      expect(c.limiter.stats()).toMatchObject({ inFlight: 0, invalidReleases: 0 })
      await close()
      c.limiter.close()
    })

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

import type { AddressInfo } from 'net'
import Fastify5 from 'fastify'
import { describe, expect, it } from 'vitest'

import { fastifyGuard } from '../../lib/entries/fastify'
import type { InboundGuard } from '../../lib/entries/http'
import { waitFor } from '../helpers/wait-for'
import { http2Client } from './http2-client'
import { controlledLimiter, get, inboundScenarios, type StartServer } from './inbound-scenarios'

// Fastify 5 and, through the npm alias fastify-v4, Fastify 4: the same tests against each.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Fastify4 = require('fastify-v4') as typeof Fastify5
const majors: Array<[string, typeof Fastify5]> = [
  ['5', Fastify5],
  ['4', Fastify4],
]

for (const [major, Fastify] of majors) {
  const startOver =
    (http2: boolean): StartServer =>
    async (guard, app) => {
      const server = Fastify({ http2 } as object)
      await server.register(fastifyGuard, guard)
      server.get('/*', (request, reply) => app(request.signal, (name, value) => void reply.header(name, value)))
      await server.listen({ port: 0, host: '127.0.0.1' })
      const guardOf = () => (server as unknown as { bulwark: InboundGuard<unknown> }).bulwark
      return {
        port: (server.server.address() as AddressInfo).port,
        close: () => server.close(),
        stats: () => guardOf().stats(),
      }
    }
  const start = startOver(false)

  describe(`fastifyGuard (Fastify ${major} plugin, HTTP/2)`, () => {
    inboundScenarios(startOver(true), http2Client)
  })

  describe(`fastifyGuard (Fastify ${major} plugin)`, () => {
    inboundScenarios(start)

    it('applies to routes registered in other plugins (not encapsulated) and decorates the instance', async () => {
      const c = controlledLimiter(2)
      const server = Fastify()
      await server.register(fastifyGuard, { limiter: c.limiter })
      let calls = 0
      await server.register(async (child) => {
        child.get('/child', async () => {
          calls++
          return 'child'
        })
      })
      await server.listen({ port: 0, host: '127.0.0.1' })
      const port = (server.server.address() as AddressInfo).port
      expect((await get(port, {}, '/child')).body).toBe('child')
      c.hold(3)
      c.signal.load = 900
      const shed = await get(port, {}, '/child')
      expect(shed.status).toBe(503)
      expect(shed.headers['retry-after']).toBe('1')
      expect(calls).toBe(1)
      expect((server as unknown as { bulwark: { limiter: unknown } }).bulwark.limiter).toBe(c.limiter)
      await server.close()
      c.releaseHeld()
      c.limiter.close()
    })

    it('declares the Fastify majors it is tested with: a later major refuses it at registration', async () => {
      const server = Fastify()
      Object.defineProperty(server, 'version', { value: '6.0.0' }) // as Fastify 6 would report itself
      await expect(server.register(fastifyGuard, { limiter: false })).rejects.toMatchObject({
        code: 'FST_ERR_PLUGIN_VERSION_MISMATCH',
        message: expect.stringMatching(/bulwark - expected '4\.x \|\| 5\.x' fastify version, '6\.0\.0'/),
      })
    })

    it('fails the registration on a bad option', async () => {
      const server = Fastify()
      await expect(server.register(fastifyGuard, { retryAfter: 'soon' } as never)).rejects.toThrow(/retryAfter/)
    })

    it("reads a route's own policy from its config (bulwark), registered before or after the plugin", async () => {
      const c = controlledLimiter(10)
      const server = Fastify()
      const critical = { config: { bulwark: { priority: 'critical' } } }
      server.get('/early', critical, async () => 'early') // registered before the plugin: compiled at its first request
      await server.register(fastifyGuard, { limiter: c.limiter, routes: { '/table': { priority: 'critical' } } })
      server.get('/late', critical, async () => 'late')
      server.get('/capped', { config: { bulwark: { concurrency: 1, rateLimit: false } } }, async () => 'capped')
      server.get('/*', async () => 'any')
      await server.listen({ port: 0, host: '127.0.0.1' })
      const port = (server.server.address() as AddressInfo).port
      c.hold(11) // shares of 10: normal 10, critical 12
      c.signal.load = 900
      const statuses = await Promise.all(
        ['/early', '/late', '/table', '/other'].map(async (path) => (await get(port, {}, path)).status),
      )
      expect(statuses).toEqual([200, 200, 200, 503])
      c.releaseHeld()
      c.signal.load = 0
      expect((await get(port, {}, '/capped')).body).toBe('capped')
      await waitFor(() => c.limiter.inFlight === 0, { what: 'every token back' })
      expect(c.limiter.stats().invalidReleases).toBe(0)
      await server.close()
      c.limiter.close()
    })

    it("fails the route's registration when its config declares a bad policy", async () => {
      const server = Fastify()
      await server.register(fastifyGuard, { limiter: false })
      expect(() => server.get('/x', { config: { bulwark: { priority: 'urgent' } } }, async () => 'x')).toThrow(
        /config\.bulwark of GET \/x\.priority/,
      )
      await server.close()
    })
  })
}

import type * as http from 'http'
import * as http2 from 'http2'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'

import { TokenBucket } from '../../lib/index'
import { honoGuard } from '../../lib/entries/hono'
import { http2Client, serving2 } from './http2-client'
import {
  type AppHandler,
  controlledLimiter,
  get,
  inboundScenarios,
  serving,
  type StartServer,
} from './inbound-scenarios'
import { fullLimiter } from './queue-scenarios'

// Hono 4 on Node, served by @hono/node-server: the middleware in front of one route that answers every path.
function app(guard: Parameters<typeof honoGuard>[0], handler: AppHandler) {
  const middleware = honoGuard(guard)
  const hono = new Hono().use(middleware).all('*', async (c) => {
    const signal = (c.req as { signal?: AbortSignal }).signal
    return c.text(await handler(signal, (name, value) => c.header(name, value)))
  })
  return { fetch: hono.fetch, stats: () => middleware.guard.stats() }
}

const start: StartServer = async (guard, handler) => {
  const { fetch, stats } = app(guard, handler)
  return { ...(await serving(serve({ fetch, port: 0, hostname: '127.0.0.1' }) as http.Server)), stats }
}

describe('honoGuard (Hono 4, @hono/node-server, HTTP/2)', () => {
  inboundScenarios(async (guard, handler) => {
    const { fetch, stats } = app(guard, handler)
    const server = serve({ fetch, createServer: http2.createServer, port: 0, hostname: '127.0.0.1' })
    return { ...(await serving2(server as unknown as http2.Http2Server)), stats }
  }, http2Client)
})

describe('honoGuard (Hono 4, @hono/node-server)', () => {
  inboundScenarios(start)

  it('lets upstream middleware see the shed answer (it is a Response of the chain)', async () => {
    const c = controlledLimiter(2)
    const statuses: number[] = []
    const hono = new Hono()
      .use(async (ctx, next) => {
        await next()
        statuses.push(ctx.res.status)
      })
      .use(honoGuard({ limiter: c.limiter }))
      .get('*', (ctx) => ctx.text('ok'))
    const { port, close } = await serving(serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' }) as http.Server)
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

describe('honoGuard without Node bindings (app.fetch with a web Request)', () => {
  it('puts the RateLimit fields on a response whose headers are immutable (a fetch answer passed on as it came)', async () => {
    const bucket = new TokenBucket({ rate: 1, burst: 5, now: () => 0 })
    const hono = new Hono().use(honoGuard({ rateLimit: { limiter: bucket, headers: true } }))
    hono.get('*', () => Response.redirect('http://upstream.test/elsewhere', 302)) // its headers are immutable
    const answer = await hono.fetch(new Request('http://test/moved'))
    expect(answer.status).toBe(302)
    expect(answer.headers.get('location')).toBe('http://upstream.test/elsewhere')
    expect(answer.headers.get('ratelimit')).toMatch(/r=4/)
  })

  it('admits, sheds and queues, and gives each token back once the chain has its response', async () => {
    const c = controlledLimiter(2)
    const hono = new Hono().use(honoGuard({ limiter: c.limiter })).get('/fail', (ctx) => ctx.text('no', 500))
    hono.get('*', (ctx) => ctx.text('ok'))
    const fetch = (path: string) => hono.fetch(new Request(`http://test${path}`))
    expect((await fetch('/a')).status).toBe(200)
    expect((await fetch('/fail')).status).toBe(500)
    expect(c.limiter.stats()).toMatchObject({ admitted: 2, inFlight: 0, invalidReleases: 0 })
    c.hold(3)
    c.signal.load = 900
    const shed = await fetch('/b')
    expect(shed.status).toBe(503)
    expect(await shed.json()).toEqual({ error: 'overloaded', reason: 'in-flight' })
    c.releaseHeld()
    c.limiter.close()

    const queued = fullLimiter(60_000)
    const waiting = new Hono().use(honoGuard({ limiter: queued.limiter })).get('*', (ctx) => ctx.text('waited'))
    const reply = waiting.fetch(new Request('http://test/q'))
    queued.releaseHeld()
    expect(await (await reply).text()).toBe('waited')
    expect(queued.limiter.stats()).toMatchObject({ inFlight: 0, queue: { admitted: 1 } })
    queued.limiter.close()
  })
})

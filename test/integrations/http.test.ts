import * as http from 'http'
import { describe, expect, it } from 'vitest'

import { InvalidArgumentError, InvalidOptionError, KeyedLimiter, TokenBucket } from '../../lib/index'
import { httpGuard } from '../../lib/entries/http'
import { controlledLimiter, get, inboundScenarios, serving, type StartServer } from './inbound-scenarios'

const start: StartServer = async (guard, app) => {
  const server = http.createServer(httpGuard((_req, res) => app().then((body) => void res.end(body)), guard))
  return serving(server.listen(0, '127.0.0.1'))
}

describe('httpGuard (node:http)', () => {
  inboundScenarios(start)

  it('reads the priority from a configured header, or from a function of the request', async () => {
    const c = controlledLimiter(10)
    c.hold(11)
    c.signal.load = 900
    const byHeader = await start({ limiter: c.limiter, priorityHeader: 'X-Class' }, async () => 'ok')
    expect((await get(byHeader.port, { 'x-priority': 'critical' })).status).toBe(503)
    expect((await get(byHeader.port, { 'x-class': 'critical' })).status).toBe(200)
    await byHeader.close()
    const byPath = await start(
      { limiter: c.limiter, priority: (req: http.IncomingMessage) => (req.url === '/health' ? 'critical' : 'low') },
      async () => 'ok',
    )
    expect((await get(byPath.port, {}, '/health')).status).toBe(200)
    expect((await get(byPath.port, { 'x-priority': 'critical' }, '/work')).status).toBe(503)
    await byPath.close()
    c.releaseHeld()
    c.limiter.close()
  })

  it('uses a global limiter (one limit for all) with its own Retry-After', async () => {
    const bucket = new TokenBucket({ rate: 0.5, burst: 1, now: () => 0 })
    const s = await start({ limiter: false, rateLimit: { limiter: bucket } }, async () => 'ok')
    expect((await get(s.port)).status).toBe(200)
    const r = await get(s.port)
    expect(r.status).toBe(429)
    expect(r.headers['retry-after']).toBe('2')
    await s.close()
  })

  it('reports sheds to onShed listeners, and the guard counts rate-limited requests', async () => {
    const c = controlledLimiter(1)
    const perClient = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 1, now: () => 0 }))
    const listener = httpGuard((_req, res) => res.end('ok'), {
      limiter: c.limiter,
      rateLimit: { limiter: perClient, key: (req) => String(req.headers['x-client']) },
    })
    const events: unknown[] = []
    const sub = listener.guard.onShed((e) => events.push(e))
    const { port, close } = await serving(http.createServer(listener).listen(0, '127.0.0.1'))
    await get(port, { 'x-client': 'a' })
    await get(port, { 'x-client': 'a' })
    c.hold(2)
    c.signal.load = 900
    await get(port, { 'x-client': 'b', 'x-priority': 'low' })
    sub.dispose()
    expect(events).toEqual([
      { reason: 'rate-limit', priority: 'normal', retryAfter: 1 },
      { reason: 'in-flight', priority: 'low', retryAfter: 1 },
    ])
    expect(listener.guard.stats().rateLimited).toBe(1)
    await close()
    c.releaseHeld()
    c.limiter.close()
  })

  it('rejects bad arguments and options with typed errors naming them', () => {
    expect(() => httpGuard(42 as never)).toThrow(InvalidArgumentError)
    const bad: Array<[object, string]> = [
      [{ limiter: 'fast' }, 'limiter'],
      [{ limiter: { window: 7, buckets: 2 } }, 'window'],
      [{ rateLimit: { limiter: {} } }, 'rateLimit.limiter'],
      [{ rateLimit: { limiter: new TokenBucket({ rate: 1 }), key: 'ip' } }, 'rateLimit.key'],
      [{ priorityHeader: 'bad header' }, 'priorityHeader'],
      [{ priority: 'high' }, 'priority'],
      [{ defaultPriority: 'urgent' }, 'defaultPriority'],
      [{ retryAfter: -1 }, 'retryAfter'],
      [{ fallback: { status: 200 } }, 'fallback'],
      [{ timeout: 0 }, 'timeout'],
      [{ deadline: { header: 'x-deadline' } }, 'deadline.trust'],
      [{ deadline: { trust: () => true } }, 'deadline.header'],
      [{ deadline: { header: 'x-deadline', trust: () => true, propagate: 'yes' } }, 'deadline.propagate'],
      [{ deadline: { header: 'x-deadline', trust: () => true, absolute: 1 } }, 'deadline.absolute'],
    ]
    for (const [options, field] of bad) {
      let error: unknown
      try {
        httpGuard(() => undefined, { limiter: false, ...options } as never)
      } catch (e) {
        error = e
      }
      expect(error, field).toBeInstanceOf(InvalidOptionError)
      expect((error as InvalidOptionError).field).toBe(field)
    }
  })

  it('creates and closes its own limiter from options', () => {
    const listener = httpGuard(() => undefined, { limiter: { minInFlight: 5 } })
    expect(listener.guard.limiter?.stats().maxInFlight).toBe(5)
    listener.guard.close()
  })
})

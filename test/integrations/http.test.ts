import * as http from 'http'
import { describe, expect, it } from 'vitest'

import {
  AccessList,
  BanList,
  BbrLimiter,
  InvalidArgumentError,
  InvalidOptionError,
  KeyedLimiter,
  TokenBucket,
} from '../../lib/index'
import { httpGuard } from '../../lib/entries/http'
import { ManualClock } from '../helpers/manual-clock'
import { waitFor } from '../helpers/wait-for'
import { controlledLimiter, get, inboundScenarios, serving, type StartServer } from './inbound-scenarios'
import { http1Slow } from './slow-clients'

const start: StartServer = async (guard, app) => {
  const listener = httpGuard(
    (req, res) =>
      app((req as { signal?: AbortSignal }).signal, (name, value) => res.setHeader(name, value)).then(
        (body) => void res.end(body),
      ),
    guard,
  )
  const served = await serving(http.createServer(listener).listen(0, '127.0.0.1'))
  return { ...served, stats: () => listener.guard.stats() }
}

describe('httpGuard (node:http)', () => {
  inboundScenarios(start)

  it('reads the priority from a configured, trusted header, or from a function of the request', async () => {
    const c = controlledLimiter(10)
    c.hold(11)
    c.signal.load = 900
    const trustPriority = () => true // every client is trusted here: an internal listener, say
    const byHeader = await start({ limiter: c.limiter, priorityHeader: 'X-Class', trustPriority }, async () => 'ok')
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

  it('matches ranges against a forwarded address only when access.address reads it', async () => {
    const list = new AccessList({ entries: { '203.0.113.0/24': 'deny' } })
    const fromProxy = { 'x-real-ip': '203.0.113.9' }
    const plain = await start({ limiter: false, access: list }, async () => 'ok')
    expect((await get(plain.port, fromProxy)).status).toBe(200) // the header alone changes nothing
    const address = (req: http.IncomingMessage) => req.headers['x-real-ip'] as string | undefined
    const proxied = await start({ limiter: false, access: { list, address } }, async () => 'ok')
    expect((await get(proxied.port, fromProxy)).status).toBe(403)
    expect((await get(proxied.port)).status).toBe(200) // no header: an address that matches no range
    await Promise.all([plain.close(), proxied.close()])
    list.close()
  })

  it('reports sheds to onShed listeners, and the guard counts rate-limited requests', async () => {
    const c = controlledLimiter(1)
    const perClient = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 1, now: () => 0 }))
    const listener = httpGuard((_req, res) => res.end('ok'), {
      limiter: c.limiter,
      priorityHeader: 'x-priority', // untrusted: it can only lower a request's class
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
      [{ trustPriority: true }, 'trustPriority'],
      [{ trustPriority: () => true, priorityHeader: false }, 'priorityHeader'],
      [{ retryAfter: -1 }, 'retryAfter'],
      [{ retryAfter: 0 }, 'retryAfter'],
      [{ retryAfterJitter: 1.5 }, 'retryAfterJitter'],
      [{ random: 0.5 }, 'random'],
      [{ fallback: { status: 200 } }, 'fallback'],
      [{ timeout: 0 }, 'timeout'],
      [{ deadline: { header: 'x-deadline' } }, 'deadline.trust'],
      [{ deadline: { trust: () => true } }, 'deadline.header'],
      [{ deadline: { header: 'x-deadline', trust: () => true, propagate: 'yes' } }, 'deadline.propagate'],
      [{ deadline: { header: 'x-deadline', trust: () => true, absolute: 1 } }, 'deadline.absolute'],
      [{ connectionConcurrency: 0 }, 'connectionConcurrency'],
      [{ connectionConcurrency: 2.5 }, 'connectionConcurrency'],
      [{ connectionConcurrency: true }, 'connectionConcurrency'],
      [{ routes: 'all' }, 'routes'],
      [{ routes: { 'get /x': {} } }, 'routes.get /x'],
      [{ routes: { '/x': { priority: 'urgent' } } }, 'routes./x.priority'],
      [{ routes: { '/x': { bogus: 1 } } }, 'routes./x.bogus'],
      [{ routes: { '/x': { skip: 'yes' } } }, 'routes./x.skip'],
      [{ routes: { '/x': { concurrency: 0 } } }, 'routes./x.concurrency'],
      [{ routes: { '/x': { concurrency: 2, keyConcurrency: { max: 1, key: () => 'k' } } } }, 'routes./x.concurrency'],
      [{ routes: { '/x': { keyConcurrency: { max: 1 } } } }, 'routes./x.keyConcurrency.key'],
      [{ routes: { '/x': { rateLimit: { limiter: {} } } } }, 'routes./x.rateLimit.limiter'],
      [{ routes: { '/x': { timeout: -1 } } }, 'routes./x.timeout'],
      [{ routes: { '/x': { fallback: 'cached' } } }, 'routes./x.fallback'],
      [{ routes: { '/a/*/b': {} } }, 'routes./a/*/b'],
      [{ access: {} }, 'access.list'],
      [{ access: { list: new AccessList(), key: 'apiKey' } }, 'access.key'],
      [{ bans: { key: 'ip' } }, 'bans.key'],
      [{ bans: { list: new BanList(), after: 3 } }, 'bans.after'],
      [{ bans: { after: 0 } }, 'after'],
      [{ readiness: { path: 'ready' } }, 'readiness.path'],
      [{ readiness: true }, 'readiness.limiter'],
      [{ readiness: { limiter: new BbrLimiter(), shedRatio: 0 } }, 'readiness.shedRatio'],
      [{ rateLimit: { limiter: new TokenBucket({ rate: 1 }), headers: 'yes' } }, 'rateLimit.headers'],
      [{ rateLimit: { limiter: { tryAcquire: () => true }, key: () => 'k', headers: true } }, 'rateLimit.headers'],
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

  it('a client header changes nothing under overload: the measured table of issue 13 now admits the same in every row', async () => {
    // A default guard but for the injected signals: full load and a 200 ms queueing delay, and a clock the test moves.
    const clock = new ManualClock(1000)
    const listener = httpGuard((_req, res) => res.end('ok'), {
      limiter: { signal: { load: () => 1000, delay: () => 200 }, now: clock.now },
    })
    const limiter = listener.guard.limiter!
    // The delay rule cuts the admit fraction at each 25 ms step (the delay is 20 times its target), to its floor. A
    // request held in flight throughout makes the delay the requests' doing (a busy loop with none is not shed for).
    const held = limiter.tryAcquire('critical')
    for (let step = 0; step < 60; step++) {
      clock.advance(25)
      const token = limiter.tryAcquire('normal')
      if (token >= 0) limiter.release(token)
    }
    const { port, close } = await serving(http.createServer(listener).listen(0, '127.0.0.1'))
    const rows: Array<[string, Record<string, string>]> = [
      ['none', {}],
      ['x-priority: high', { 'x-priority': 'high' }],
      ['x-priority: critical', { 'x-priority': 'critical' }],
    ]
    const admitted: Record<string, number> = {}
    for (const [row, headers] of rows) {
      admitted[row] = 0
      for (let i = 0; i < 100; i++) if ((await get(port, headers)).status === 200) admitted[row]++
    }
    await close()
    limiter.release(held)
    listener.guard.close()
    // Before: { none: 2, 'x-priority: high': 14, 'x-priority: critical': 100 }.
    expect(admitted).toEqual({ none: 2, 'x-priority: high': 2, 'x-priority: critical': 2 })
  })

  it('announces Retry-After of at least 1 s, spread by retryAfterJitter', async () => {
    const c = controlledLimiter(1)
    const draws = [0, 0.5, 0.99]
    const s = await start(
      { limiter: c.limiter, retryAfter: 2, retryAfterJitter: 3, random: () => draws.shift() ?? 0 },
      async () => 'ok',
    )
    c.hold(2)
    c.signal.load = 900
    const announced = []
    for (let i = 0; i < 3; i++) announced.push((await get(s.port)).headers['retry-after'])
    expect(announced).toEqual(['2', '4', '5']) // 2 + floor(r * 4)
    await s.close()
    c.releaseHeld()
    c.limiter.close()
  })

  it('counts connectionConcurrency refusals in stats and onShed, without a limiter too; false bounds nothing', async () => {
    let letGo: () => void = () => undefined
    const gate = new Promise<void>((r) => (letGo = r))
    let calls = 0
    const gated = (_req: http.IncomingMessage, res: http.ServerResponse) => {
      calls++
      void gate.then(() => res.end('ok'))
    }
    const bounded = httpGuard(gated, { limiter: false, connectionConcurrency: 2 })
    const events: unknown[] = []
    bounded.guard.onShed((e) => events.push(e))
    const a = await serving(http.createServer(bounded).listen(0, '127.0.0.1'))
    const connection = http1Slow.connect(a.port)
    const replies = connection.send(3)
    await waitFor(() => bounded.guard.stats().shedConnectionConcurrency === 1, { what: 'the third to be refused' })
    letGo()
    expect((await replies).map((r) => r.status)).toEqual([200, 200, 429])
    expect(events).toEqual([{ reason: 'connection-concurrency', priority: 'normal', retryAfter: 1 }])
    connection.close()
    await a.close()
    calls = 0
    const unbounded = httpGuard(gated, { limiter: false, connectionConcurrency: false })
    const b = await serving(http.createServer(unbounded).listen(0, '127.0.0.1'))
    const many = http1Slow.connect(b.port)
    const all = many.send(150)
    expect((await all).every((r) => r.status === 200)).toBe(true)
    expect(calls).toBe(150)
    expect(unbounded.guard.stats().shedConnectionConcurrency).toBe(0)
    many.close()
    await b.close()
  })

  it('creates and closes its own limiter from options', () => {
    const listener = httpGuard(() => undefined, { limiter: { minInFlight: 5 } })
    expect(listener.guard.limiter?.stats().maxInFlight).toBe(5)
    listener.guard.close()
  })
})

// Fallback answers, timeouts, errors and deadlines, asserted against every inbound adapter (inboundScenarios runs
// these too): the same behaviour over node:http, node:http2, Express, Fastify and Koa.
import { afterEach, expect, it, vi } from 'vitest'

import { BreakerOpenError, HotKeyCache, KeyedLimiter, Switchboard, TokenBucket } from '../../lib/index'
import { type InboundGuardOptions } from '../../lib/entries/http'
import { loopTurns } from '../helpers/loop-turns'
import { waitFor } from '../helpers/wait-for'
import type { AppHandler, ScenarioClient, StartServer, TestServer } from './inbound-scenarios'
import { controlledLimiter, headerOf, pathOf } from './inbound-scenarios'

/** An application that waits at a gate (counting who reached it), then answers or fails as it is told. */
export function gatedApp(outcome: () => Promise<string> = async () => 'late') {
  let open: () => void = () => undefined
  const gate = new Promise<void>((r) => (open = r))
  const app = {
    calls: 0,
    done: 0,
    open: () => open(),
    handler: async () => {
      app.calls++
      await gate
      try {
        return await outcome()
      } finally {
        app.done++
      }
    },
  }
  return app
}

export function degradeScenarios(start: StartServer, client: ScenarioClient): void {
  const get = client.get
  let server: TestServer | undefined
  const open = async (guard: InboundGuardOptions<any>, handler: AppHandler) => {
    server = await start(guard, handler)
    return server.port
  }
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it("the handler's signal aborts on the guard's timeout (TimeoutError) and when its client goes away (AbortError)", async () => {
    const signals: Array<AbortSignal | undefined> = []
    const port = await open(
      {
        limiter: false,
        timeout: (req: any) => (/slow/.test(pathOf(req) ?? '') ? 60_000 : 50),
      },
      async (signal) => {
        signals.push(signal)
        if (signal === undefined) return 'no signal'
        await new Promise((r) => signal.addEventListener('abort', r, { once: true }))
        return 'late'
      },
    )
    const timedOut = await get(port)
    expect(timedOut.status).toBe(503)
    await waitFor(() => signals[0]?.aborted === true, { what: "the timed-out handler's signal to abort" })
    expect((signals[0]?.reason as DOMException).name).toBe('TimeoutError')

    const gone = client.start(port, '/slow')
    await waitFor(() => signals.length === 2, { what: 'the second request to reach its handler' })
    expect(signals[1]?.aborted).toBe(false)
    gone.abort()
    await waitFor(() => signals[1]?.aborted === true, { what: "the departed client's handler signal to abort" })
    expect((signals[1]?.reason as DOMException).name).toBe('AbortError')
  })

  it('a fallback answers shed and rate-limited requests in place of the 503 and the 429', async () => {
    const c = controlledLimiter(2)
    const perClient = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 1, now: () => 0 }))
    const key = (req: any) => String(headerOf(req, 'x-client'))
    const reasons: string[] = []
    const fallback = (_req: unknown, reason: string) => {
      reasons.push(reason)
      return { status: 200, headers: { 'x-degraded': reason }, body: { cached: true } }
    }
    let calls = 0
    const port = await open({ limiter: c.limiter, rateLimit: { limiter: perClient, key }, fallback }, async () => {
      calls++
      return 'fresh'
    })
    expect((await get(port, { 'x-client': 'a' })).body).toBe('fresh')
    const limited = await get(port, { 'x-client': 'a' })
    expect(limited.status).toBe(200)
    expect(limited.headers['x-degraded']).toBe('rate-limit')
    c.hold(3)
    c.signal.load = 900
    const shed = await get(port, { 'x-client': 'b' })
    expect(shed.status).toBe(200)
    expect(shed.headers['x-degraded']).toBe('overload')
    expect(shed.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(shed.body)).toEqual({ cached: true })
    expect(reasons).toEqual(['rate-limit', 'overload'])
    expect(calls).toBe(1)
    c.releaseHeld()
    c.limiter.close()
  })

  it('a fallback that returns undefined gives the plain 503; one that throws gives the plain 503 too', async () => {
    const c = controlledLimiter(2)
    let mode: 'undefined' | 'throw' = 'undefined'
    const fallback = () => {
      if (mode === 'throw') throw new Error('the fallback is broken too')
      return undefined
    }
    const port = await open({ limiter: c.limiter, fallback }, async () => 'ok')
    c.hold(3)
    c.signal.load = 900
    const plain = await get(port)
    expect(plain.status).toBe(503)
    expect(JSON.parse(plain.body)).toEqual({ error: 'overloaded', reason: 'in-flight' })
    mode = 'throw'
    const broken = await get(port)
    expect(broken.status).toBe(503)
    expect(broken.headers['retry-after']).toBe('1')
    c.releaseHeld()
    c.limiter.close()
  })

  it('a fallback serves the last good answer, kept in a HotKeyCache, while the limiter sheds', async () => {
    const c = controlledLimiter(2)
    const cache = new HotKeyCache<string>({ ttl: 60_000, allow: [{ pattern: '^/' }] })
    let version = 0
    let lastPath = ''
    const port = await open(
      {
        limiter: c.limiter,
        fallback: (req) => {
          const stale = cache.get(pathOf(req))
          return stale === undefined ? undefined : { headers: { 'x-stale': '1' }, body: stale }
        },
        priority: (req: any) => ((lastPath = pathOf(req)), 'normal'),
      },
      async () => {
        const body = `price v${++version}`
        cache.addWithValue(lastPath, body)
        return body
      },
    )
    expect((await get(port, {}, '/item/7')).body).toBe('price v1')
    c.hold(3)
    c.signal.load = 900
    const stale = await get(port, {}, '/item/7')
    expect(stale).toMatchObject({ status: 200, body: 'price v1' })
    expect(stale.headers['x-stale']).toBe('1')
    expect((await get(port, {}, '/item/8')).status).toBe(503) // nothing cached for it: the plain answer
    c.releaseHeld()
    c.limiter.close()
    cache.close()
  })

  it('a handler that does not answer within timeout gets the fallback; its late answer goes nowhere, its token once', async () => {
    const { limiter } = controlledLimiter(20)
    const release = vi.spyOn(limiter, 'release')
    const app = gatedApp()
    const fallback = vi.fn((_req: unknown, reason: string) => ({ status: 200, body: `degraded: ${reason}` }))
    const port = await open({ limiter, timeout: 50, fallback }, app.handler)
    const r = await get(port)
    expect(r).toMatchObject({ status: 200, body: 'degraded: timeout' })
    expect(fallback).toHaveBeenCalledTimes(1)
    app.open() // the handler answers now, too late: no "headers already sent", no crash
    await waitFor(() => app.done === 1, { what: 'the late handler to finish' })
    await waitFor(() => limiter.inFlight === 0, { what: 'the token to be released' })
    await loopTurns() // what the late answer set off after its handler settled
    expect(release).toHaveBeenCalledTimes(1)
    expect(release.mock.calls[0][1]).toBe(false) // a degraded answer's time is not the service's
    expect(limiter.stats()).toMatchObject({ admitted: 1, invalidReleases: 0 })
    expect((await get(port)).body).toBe('late') // the gate is open now: answered in time, and the server is fine
    limiter.close()
  })

  it('without a fallback answer, a timeout is a plain 503; a per-request timeout function picks the time', async () => {
    const app = gatedApp()
    const timeout = (req: unknown) => (pathOf(req) === '/slow' ? 40 : undefined)
    const port = await open({ limiter: false, timeout, fallback: () => undefined }, app.handler)
    const r = await get(port, {}, '/slow')
    expect(r.status).toBe(503)
    expect(JSON.parse(r.body)).toEqual({ error: 'timeout' })
    const other = get(port, {}, '/fast') // no timeout for this route: it waits for the gate
    await waitFor(() => app.calls === 2, { what: 'the second request to reach the handler' })
    app.open()
    expect(await other).toMatchObject({ status: 200, body: 'late' })
  })

  it('an error the handler throws gets the fallback; a BreakerOpenError says breaker-open; its token once', async () => {
    const { limiter } = controlledLimiter(20)
    const reasons: string[] = []
    let failure: Error = new Error('database down')
    const port = await open(
      { limiter, fallback: (_req, reason) => (reasons.push(reason), { status: 200, body: `fallback: ${reason}` }) },
      async () => {
        throw failure
      },
    )
    expect(await get(port)).toMatchObject({ status: 200, body: 'fallback: error' })
    failure = new BreakerOpenError('inventory')
    expect(await get(port)).toMatchObject({ status: 200, body: 'fallback: breaker-open' })
    expect(reasons).toEqual(['error', 'breaker-open'])
    await waitFor(() => limiter.inFlight === 0, { what: 'the tokens to be released' })
    expect(limiter.stats()).toMatchObject({ admitted: 2, invalidReleases: 0 })
    limiter.close()
  })

  it('an error whose fallback throws gets the plain 503', async () => {
    const port = await open(
      {
        limiter: false,
        fallback: () => {
          throw new Error('the fallback fails as well')
        },
      },
      async () => {
        throw new Error('database down')
      },
    )
    const r = await get(port)
    expect(r.status).toBe(503)
    expect(JSON.parse(r.body)).toEqual({ error: 'unavailable' })
  })

  it('refuses at once a request whose trusted deadline is shorter than the expected service time', async () => {
    const c = controlledLimiter(20)
    let calls = 0
    const trusted = (req: any) => headerOf(req, 'x-internal') === 'yes'
    const port = await open({ limiter: c.limiter, deadline: { header: 'X-Deadline-Ms', trust: trusted } }, async () => {
      calls++
      return 'ok'
    })
    expect(c.limiter.expectedServiceMs()).toBe(1) // nothing measured yet: 1 ms
    const refused = await get(port, { 'x-deadline-ms': '0', 'x-internal': 'yes' })
    expect(refused.status).toBe(503)
    expect(JSON.parse(refused.body)).toEqual({ error: 'overloaded', reason: 'deadline' })
    expect(calls).toBe(0)
    // The same header from a client the application does not trust changes nothing.
    expect((await get(port, { 'x-deadline-ms': '0' })).status).toBe(200)
    expect((await get(port, { 'x-deadline-ms': '5000', 'x-internal': 'yes' })).status).toBe(200)
    expect((await get(port, { 'x-deadline-ms': 'soon', 'x-internal': 'yes' })).status).toBe(200) // ignored
    expect(calls).toBe(3)
    c.limiter.close()
  })

  it('reads an absolute deadline (Date.now() ms) when told: one already past is refused at once', async () => {
    let calls = 0
    const port = await open(
      { limiter: false, deadline: { header: 'x-deadline', absolute: true, trust: () => true } },
      async () => {
        calls++
        return 'ok'
      },
    )
    const past = await get(port, { 'x-deadline': String(Date.now() - 1) })
    expect(JSON.parse(past.body)).toEqual({ error: 'overloaded', reason: 'deadline' })
    expect((await get(port, { 'x-deadline': String(Date.now() + 60_000) })).status).toBe(200)
    expect(calls).toBe(1)
  })

  it("an operator's switches: a class is shed (plain 503 'forced'), a route is answered from the fallback", async () => {
    const board = new Switchboard()
    const reasons: string[] = []
    const port = await open(
      {
        limiter: false,
        switches: board,
        route: (req) => pathOf(req).split('?')[0],
        fallback: (_req, reason) => (reasons.push(reason), reason === 'forced' ? { body: 'degraded page' } : undefined),
      },
      async () => 'fresh',
    )
    expect((await get(port, {}, '/page')).body).toBe('fresh')
    board.set('route:/page', 'fallback')
    expect(await get(port, {}, '/page?x=1')).toMatchObject({ status: 200, body: 'degraded page' })
    board.set('priority:normal', 'shed')
    const shed = await get(port, {}, '/other')
    expect(shed.status).toBe(503)
    expect(JSON.parse(shed.body)).toEqual({ error: 'overloaded', reason: 'forced' })
    expect(reasons).toEqual(['forced', 'overload'])
    board.clearAll()
    expect((await get(port, {}, '/page')).body).toBe('fresh')
    board.close()
  })
}

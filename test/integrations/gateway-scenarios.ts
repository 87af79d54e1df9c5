// What a gateway configures (docs/guide/gateway.md), through every inbound adapter over real sockets: per-route
// policy, allow and deny lists, bans, the rate limit's header fields and the readiness answer.
import { expect, it } from 'vitest'

import { AccessList, KeyedLimiter, TokenBucket } from '../../lib/index'
import type { InboundGuardOptions } from '../../lib/entries/http'
import { ManualClock } from '../helpers/manual-clock'
import { waitFor } from '../helpers/wait-for'
import { type AppHandler, controlledLimiter, type ScenarioClient } from './inbound-scenarios'

type Open = (guard: InboundGuardOptions<any>, handler?: AppHandler) => Promise<number>

/** Registers the gateway scenarios for one adapter; `open` starts its server (the app counts its calls). */
export function gatewayScenarios(open: Open, calls: () => number, client: ScenarioClient): void {
  const get = client.get

  it('routes: one table gives each route its class; a skipped route passes a full limiter uncounted', async () => {
    const c = controlledLimiter(10)
    const routes = { 'GET /health': 'skip', '/checkout': { priority: 'critical' }, 'POST /checkout': 'skip' } as const
    const port = await open({ limiter: c.limiter, routes })
    c.hold(11) // shares of 10: normal 10, critical 12
    c.signal.load = 900
    expect((await get(port, {}, '/work')).status).toBe(503)
    expect((await get(port, {}, '/checkout?step=2')).status).toBe(200) // critical: its share is above the held ones
    expect((await get(port, {}, '/health')).status).toBe(200)
    expect((await get(port, {}, '/Health/')).status).toBe(200) // matched as the frameworks route it
    await waitFor(() => c.limiter.inFlight === 11, { what: 'the admitted request to be released' })
    const s = c.limiter.stats()
    expect(s.admitted).toBe(12) // the held ones and /checkout: the health checks never reached the limiter
    expect(s.byPriority.critical.admitted).toBe(12)
    c.releaseHeld()
    c.limiter.close()
  })

  it('routes: a route’s own rate limit and concurrency, other routes untouched, every token released once', async () => {
    const c = controlledLimiter(50)
    let open_: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (open_ = resolve))
    const bucket = new TokenBucket({ rate: 0.001, burst: 1, now: () => 0 })
    const routes = { '/search': { rateLimit: { limiter: bucket } }, '/export': { concurrency: 1 } }
    let handled = 0
    const port = await open({ limiter: c.limiter, routes }, async () => {
      handled++
      await gate
      return 'ok'
    })
    const first = get(port, {}, '/export')
    await waitFor(() => handled === 1, { what: 'the first export to reach its handler' })
    const second = await get(port, {}, '/export')
    expect(second.status).toBe(429)
    expect(JSON.parse(second.body)).toEqual({ error: 'too many concurrent requests' })
    const search = get(port, {}, '/search')
    await waitFor(() => handled === 2, { what: 'the search to reach its handler' })
    expect((await get(port, {}, '/search')).status).toBe(429)
    const work = get(port, {}, '/work') // no limit of its own: the guard has none
    open_()
    expect((await Promise.all([first, search, work])).map((r) => r.status)).toEqual([200, 200, 200])
    await waitFor(() => c.limiter.inFlight === 0, { what: 'every token to be released' })
    expect((await get(port, {}, '/export')).status).toBe(200) // its slot came back
    await waitFor(() => c.limiter.inFlight === 0, { what: 'the last token to be released' })
    expect(c.limiter.stats().invalidReleases).toBe(0)
    c.limiter.close()
  })

  it('routes: a route’s timeout and fallback replace the guard’s', async () => {
    const port = await open(
      {
        limiter: false,
        timeout: 60_000,
        fallback: () => ({ body: 'from the guard' }),
        routes: { '/slow': { timeout: 50, fallback: () => ({ body: 'from the route' }) } },
      },
      () => new Promise<string>(() => undefined), // never answers
    )
    const r = await get(port, {}, '/slow')
    expect([r.status, r.body]).toEqual([200, 'from the route'])
  })

  it('access: a deny entry answers 403 at once; an allow entry passes a full limiter; a change applies live', async () => {
    const c = controlledLimiter(2)
    const list = new AccessList({ entries: { '127.0.0.0/8': 'deny' } })
    const port = await open({ limiter: c.limiter, access: list })
    const denied = await get(port)
    expect(denied.status).toBe(403)
    expect(JSON.parse(denied.body)).toEqual({ error: 'forbidden' })
    expect(denied.headers['retry-after']).toBeUndefined()
    expect(calls()).toBe(0)
    list.configure({ '127.0.0.1': 'allow' }) // the longer prefix decides
    c.hold(3)
    c.signal.load = 900
    const allowed = await get(port)
    expect(allowed.status).toBe(200)
    expect(Object.keys(allowed.headers).filter((h) => h.includes('ratelimit'))).toEqual([]) // none asked for
    expect(calls()).toBe(1)
    list.clear()
    expect((await get(port)).status).toBe(503)
    expect(c.limiter.stats().admitted).toBe(3) // the allowed request never reached the limiter
    c.releaseHeld()
    c.limiter.close()
    list.close()
  })

  it('bans: after refusals close together, the client is refused 429 "banned" until the ban ends', async () => {
    const clock = new ManualClock(0)
    const bucket = new TokenBucket({ rate: 0.01, burst: 1, now: clock.now })
    const port = await open({
      limiter: false,
      rateLimit: { limiter: bucket },
      bans: { after: 2, window: 60_000, duration: 120_000, now: clock.now },
    })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await get(port)).status)
    expect(statuses).toEqual([200, 429, 429])
    const banned = await get(port)
    expect(banned.status).toBe(429)
    expect(JSON.parse(banned.body)).toEqual({ error: 'banned' })
    expect(banned.headers['retry-after']).toBe('120')
    clock.advance(120_001)
    expect((await get(port)).status).toBe(200) // ban over, and the bucket refilled meanwhile
    expect(calls()).toBe(2)
  })

  it('bans: a rate limit in shadow mode refuses nothing, so it bans nothing (docs/rules/shadow.md)', async () => {
    const clock = new ManualClock(0)
    const bucket = new TokenBucket({ rate: 0.01, burst: 1, now: clock.now })
    bucket.configure({ shadow: true })
    const port = await open({
      limiter: false,
      rateLimit: { limiter: bucket },
      bans: { after: 2, window: 60_000, duration: 120_000, now: clock.now },
    })
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await get(port)).status)
    expect(statuses).toEqual([200, 200, 200, 200, 200])
    expect(calls()).toBe(5)
    expect(bucket.stats().rules?.shadow?.wouldRefuse).toEqual([{ reason: 'rate', count: 4 }])
    bucket.close()
  })

  it('headers: RateLimit and RateLimit-Policy on admitted and refused answers, beside Retry-After', async () => {
    const clock = new ManualClock(0)
    const perClient = new KeyedLimiter({ rate: 1, burst: 2, now: clock.now })
    const port = await open({ limiter: false, rateLimit: { limiter: perClient, headers: true } })
    const replies = [await get(port), await get(port), await get(port)]
    expect(replies.map((r) => r.status)).toEqual([200, 200, 429])
    expect(replies.map((r) => r.headers['ratelimit-policy'])).toEqual(Array(3).fill('"default";q=2;w=2'))
    expect(replies.map((r) => r.headers.ratelimit)).toEqual([
      '"default";r=1;t=1',
      '"default";r=0;t=1',
      '"default";r=0;t=1',
    ])
    expect(replies[2].headers['retry-after']).toBe('1')
    expect(replies[0].headers['x-ratelimit-limit']).toBeUndefined()
    perClient.close()
  })

  it("headers: 'legacy' sends the X-RateLimit trio instead", async () => {
    const clock = new ManualClock(0)
    const bucket = new TokenBucket({ rate: 2, burst: 5, now: clock.now })
    const port = await open({ limiter: false, rateLimit: { limiter: bucket, headers: 'legacy' } })
    const r = await get(port)
    const trio = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map((h) => r.headers[h])
    expect(trio).toEqual(['5', '4', '1'])
    expect(r.headers.ratelimit).toBeUndefined()
  })

  it('readiness: /ready says 503 after shedding for notReadyAfter, 200 again after readyAfter calm', async () => {
    const c = controlledLimiter(2)
    const readiness = { now: c.clock.now, interval: 1000, notReadyAfter: 2000, readyAfter: 3000 }
    const port = await open({ limiter: c.limiter, readiness })
    const probe = async () => {
      const r = await get(port, {}, '/ready?probe=kubelet')
      expect(r.headers['retry-after']).toBeUndefined()
      return `${r.status} ${r.body}`
    }
    expect(await probe()).toBe('200 {"ready":true}')
    c.hold(3)
    c.signal.load = 900
    const shedSecond = async () => {
      for (let i = 0; i < 4; i++) expect((await get(port)).status).toBe(503)
      c.clock.advance(1000)
    }
    await shedSecond()
    expect(await probe()).toBe('200 {"ready":true}') // one busy second: still in rotation
    await shedSecond()
    expect(await probe()).toBe('503 {"ready":false,"reason":"shedding"}')
    c.releaseHeld()
    c.signal.load = 0
    c.clock.advance(1000)
    expect(await probe()).toBe('503 {"ready":false,"reason":"shedding"}') // one calm second is not enough
    c.clock.advance(3000)
    expect(await probe()).toBe('200 {"ready":true}')
    expect(calls()).toBe(0) // the probe never reached the application
    expect(c.limiter.stats().admitted).toBe(3)
    c.limiter.close()
  })
}

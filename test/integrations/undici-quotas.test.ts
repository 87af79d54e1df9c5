import * as http from 'http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { OverloadError } from '../../lib/foundation/errors/overload-error'
import { Quota } from '../../lib/components/ratelimit/quota'
import type { Reservation } from '../../lib/components/ratelimit/waiting/reservation'
import { undiciGuard } from '../../lib/adapters/undici/undici-guard'
import { upstreamLimits, headerLookup } from '../../lib/guards/outbound/rate-limit-headers'
import { serving, type TestServer } from './inbound-scenarios'
import { undiciMajors } from './undici-majors'

// A model provider in miniature: /ok answers 200 with a token count in its body and its remaining budget in the
// headers it is told to send (?h=name:value,...); /limited answers 429 with Retry-After.
let origin: TestServer
let hits = 0
beforeAll(async () => {
  const server = http.createServer((req, res) => {
    hits++
    const url = new URL(req.url ?? '/', 'http://x')
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    for (const pair of (url.searchParams.get('h') ?? '').split(',').filter(Boolean)) {
      const [name, value] = pair.split(':')
      headers[name] = value
    }
    if (url.pathname === '/limited') {
      res.writeHead(429, { ...headers, 'retry-after': '20' })
      return res.end('{}')
    }
    res.writeHead(200, headers)
    res.end(JSON.stringify({ usage: { total_tokens: Number(url.searchParams.get('tokens') ?? 0) } }))
  })
  origin = await serving(server.listen(0, '127.0.0.1'))
})
afterAll(async () => {
  await origin.close()
})

// The quotas' clock stands still: what they hold changes only by what the calls do.
const frozen = (): number => 1000

for (const { major, undici } of undiciMajors) {
  describe(`undiciGuard quotas per origin (undici ${major})`, () => {
    const base = () => `http://127.0.0.1:${origin.port}`

    function setup(quota: Quota, extra: object = {}) {
      const guard = undiciGuard({ quotas: { [base()]: { quota, maxWait: 0, ...extra } }, bulkheads: false })
      const dispatcher = new undici.Agent().compose(guard)
      return { guard, dispatcher }
    }

    it('a call waits for its origin’s quota; refused at once with maxWait 0 when it is spent, never sent', async () => {
      const quota = new Quota({ now: frozen, window: 60_000, requests: 2 })
      const { dispatcher, guard } = setup(quota)
      const before = hits
      for (let i = 0; i < 2; i++) await (await undici.request(`${base()}/ok`, { dispatcher })).body.text()
      const refused = await undici.request(`${base()}/ok`, { dispatcher }).catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(OverloadError)
      expect(hits - before).toBe(2)
      guard.close()
      quota.close()
    })

    it('the caller settles the real cost from the body through context.reservation', async () => {
      const quota = new Quota({ now: frozen, window: 60_000, requests: 100, cost: 10_000 })
      const { dispatcher, guard } = setup(quota, { estimate: 4000 })
      const res = await undici.request(`${base()}/ok?tokens=1500`, { dispatcher })
      expect(quota.stats().cost?.available).toBeCloseTo(6000, 0)
      const body = (await res.body.json()) as { usage: { total_tokens: number } }
      ;(res.context as { reservation: Reservation }).reservation.settle(body.usage.total_tokens)
      expect(quota.stats().cost?.available).toBeCloseTo(8500, 0)
      guard.close()
      quota.close()
    })

    it('settles from the headers when `cost` reads them', async () => {
      const quota = new Quota({ now: frozen, window: 60_000, cost: 10_000 })
      const { dispatcher, guard } = setup(quota, {
        estimate: 4000,
        cost: (_status: number, header: (name: string) => string | undefined) => Number(header('x-usage-tokens')),
      })
      await (await undici.request(`${base()}/ok?h=x-usage-tokens:300`, { dispatcher })).body.text()
      expect(quota.stats().cost?.available).toBeCloseTo(9700, 0)
      guard.close()
      quota.close()
    })

    it('a 429 with Retry-After pauses the origin: the next call is refused here, and the refused one is not charged', async () => {
      const quota = new Quota({ now: frozen, window: 60_000, requests: 100, cost: 10_000 })
      const { dispatcher, guard } = setup(quota, { estimate: 1000 })
      const limited = await undici.request(`${base()}/limited`, { dispatcher })
      expect(limited.statusCode).toBe(429)
      await limited.body.text()
      const before = hits
      await expect(undici.request(`${base()}/ok`, { dispatcher })).rejects.toBeInstanceOf(OverloadError)
      expect(hits).toBe(before)
      guard.close()
      quota.close()
    })

    it('remaining-token headers lower the quota before the next 429', async () => {
      const quota = new Quota({ now: frozen, window: 60_000, requests: 100, cost: 90_000 })
      const { dispatcher, guard } = setup(quota)
      const headers = 'x-ratelimit-remaining-requests:50,x-ratelimit-remaining-tokens:2000'
      await (await undici.request(`${base()}/ok?h=${headers}`, { dispatcher })).body.text()
      expect(quota.stats().cost?.available).toBeLessThanOrEqual(2000 + 1)
      expect(quota.stats().requests?.available).toBeLessThanOrEqual(50 + 1)
      guard.close()
      quota.close()
    })
  })
}

describe('upstreamLimits: the headers read', () => {
  const now = 1_700_000_000_000
  const read = (status: number, headers: Record<string, string>) => upstreamLimits(status, headerLookup(headers), now)

  it('OpenAI and Anthropic remaining counts; the lowest token count wins', () => {
    expect(read(200, { 'x-ratelimit-remaining-requests': '59', 'x-ratelimit-remaining-tokens': '88000' })).toEqual({
      requests: 59,
      cost: 88000,
    })
    expect(
      read(200, {
        'anthropic-ratelimit-requests-remaining': '9',
        'anthropic-ratelimit-input-tokens-remaining': '5000',
        'anthropic-ratelimit-output-tokens-remaining': '700',
      }),
    ).toEqual({ requests: 9, cost: 700 })
  })

  it('Retry-After as seconds, as a date, and retry-after-ms, only on 429 and 503', () => {
    expect(read(429, { 'retry-after': '7' })).toEqual({ pauseMs: 7000 })
    expect(read(503, { 'retry-after': new Date(now + 3000).toUTCString() })).toEqual({ pauseMs: 3000 })
    expect(read(429, { 'retry-after-ms': '250', 'retry-after': '9' })).toEqual({ pauseMs: 250 })
    expect(read(200, { 'retry-after': '7' })).toBeUndefined()
  })

  it('fixed windows (IETF drafts, X-RateLimit): an empty window pauses until its reset', () => {
    expect(read(200, { ratelimit: '"default";r=0;t=12' })).toEqual({ requests: 0, pauseMs: 12_000 })
    expect(read(200, { 'ratelimit-remaining': '4', 'ratelimit-reset': '30' })).toEqual({ requests: 4 })
    expect(read(200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String((now + 5000) / 1000) })).toEqual({
      requests: 0,
      pauseMs: 5000,
    })
    expect(read(200, { 'x-ratelimit-remaining': 'lots' })).toBeUndefined()
  })

  it('reads the callback API’s flat array of Buffers', () => {
    const raw = [Buffer.from('X-RateLimit-Remaining-Tokens'), Buffer.from('12')]
    expect(upstreamLimits(200, headerLookup(raw), now)).toEqual({ cost: 12 })
  })
})

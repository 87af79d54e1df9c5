// Per-key concurrency (docs/rules/key-concurrency.md), asserted against every inbound adapter (inboundScenarios runs
// these): at most N requests in flight per key, answered 429 past it, and each slot given back exactly once on every
// way a request ends: its response, a client that goes away (connection closed, HTTP/2 stream reset), a thrown
// error, a timeout answered by the fallback.
import { afterEach, expect, it } from 'vitest'

import { KeyConcurrencyLimiter } from '../../lib/index'
import { type InboundGuardOptions } from '../../lib/entries/http'
import { loopTurns } from '../helpers/loop-turns'
import { waitFor } from '../helpers/wait-for'
import type { AppHandler, ScenarioClient, StartServer, TestServer } from './inbound-scenarios'
import { controlledLimiter, pathOf } from './inbound-scenarios'
import { gatedApp } from './degrade-scenarios'
import { fullLimiter } from './queue-scenarios'

/** The request's path: the key in these scenarios (a client started by `client.start` sends no headers). */

export function keyConcurrencyScenarios(start: StartServer, client: ScenarioClient): void {
  const get = client.get
  let server: TestServer | undefined
  let keys: KeyConcurrencyLimiter | undefined
  const open = async (guard: Omit<InboundGuardOptions<any>, 'keyConcurrency'>, handler: AppHandler, max = 2) => {
    keys = new KeyConcurrencyLimiter({ max })
    server = await start({ ...guard, keyConcurrency: { limiter: keys, key: pathOf } }, handler)
    return { port: server.port, keys }
  }
  afterEach(async () => {
    await server?.close()
    keys?.close()
    server = undefined
  })
  const settled = async (k: KeyConcurrencyLimiter, key: string) => {
    await waitFor(() => k.inFlight(key) === 0, { what: `${key}'s slots to come back` })
    await loopTurns() // the responses' 'close' after their 'finish': a second release would have come by now
    expect(k.stats().invalidReleases).toBe(0)
  }

  it('per-key concurrency: the third request of a key with 2 in flight gets 429, other keys pass, slots come back once', async () => {
    const c = controlledLimiter(20)
    const app = gatedApp()
    const { port, keys: k } = await open({ limiter: c.limiter }, app.handler)
    const held = [get(port, {}, '/a'), get(port, {}, '/a'), get(port, {}, '/b')]
    await waitFor(() => app.calls === 3, { what: 'three requests to reach the handler' })
    const refused = await get(port, {}, '/a')
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(JSON.parse(refused.body)).toEqual({ error: 'too many concurrent requests' })
    expect(app.calls).toBe(3)
    expect(k.inFlight('/a')).toBe(2)
    app.open()
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200])
    await settled(k, '/a')
    expect(k.inFlight('/b')).toBe(0)
    await waitFor(() => c.limiter.inFlight === 0, { what: "the adaptive limiter's tokens to come back" })
    expect(c.limiter.stats().invalidReleases).toBe(0)
    expect(k.stats()).toMatchObject({ admitted: 3, shed: 1 })
    expect((await get(port, {}, '/a')).status).toBe(200)
    c.limiter.close()
  })

  it('per-key concurrency: a client that goes away gives its slot back before its handler ends', async () => {
    const app = gatedApp()
    const { port, keys: k } = await open({ limiter: false }, app.handler, 1)
    const request = client.start(port, '/gone')
    await waitFor(() => k.inFlight('/gone') === 1, { what: 'the request to hold its slot' })
    request.abort()
    await settled(k, '/gone') // the handler is still waiting at the gate
    expect(app.done).toBe(0)
    app.open()
    await waitFor(() => app.done === 1, { what: 'the handler to end' })
    await settled(k, '/gone')
    expect((await get(port, {}, '/gone')).status).toBe(200)
  })

  it('per-key concurrency: a thrown error and a timeout answered by the fallback each give the slot back once', async () => {
    const failing = gatedApp(async () => {
      throw new Error('the handler failed')
    })
    failing.open()
    const { port, keys: k } = await open({ limiter: false, timeout: 50, fallback: () => undefined }, failing.handler, 1)
    expect((await get(port, {}, '/err')).status).toBeGreaterThanOrEqual(500)
    await settled(k, '/err')
    await server?.close()
    keys?.close()

    const slow = gatedApp()
    const reasons: string[] = []
    const fallback = (_req: unknown, reason: string) => (reasons.push(reason), { status: 200, body: reason })
    // The second request must arrive while the first still holds the slot: a timeout long enough for a loaded machine.
    const again = await open({ limiter: false, timeout: 1500, fallback }, slow.handler, 1)
    const first = get(again.port, {}, '/slow')
    await waitFor(() => slow.calls === 1, { what: 'the slow request to reach the handler' })
    const second = await get(again.port, {}, '/slow') // while the first holds the key's only slot
    expect(second).toMatchObject({ status: 200, body: 'rate-limit' })
    expect(await first).toMatchObject({ status: 200, body: 'timeout' })
    await settled(again.keys, '/slow')
    slow.open()
    await waitFor(() => slow.done === 1, { what: 'the late handler to end' })
    await settled(again.keys, '/slow')
    expect(reasons).toEqual(['rate-limit', 'timeout'])
  })

  it('per-key concurrency with a queue: a waiting request holds no slot, takes one when admitted, gives it back once', async () => {
    const { limiter, releaseHeld } = fullLimiter(60_000)
    const app = gatedApp()
    const { port, keys: k } = await open({ limiter }, app.handler, 1)
    const queued = get(port, {}, '/q')
    await waitFor(() => limiter.stats().queue?.length === 1, { what: 'the request to wait in the queue' })
    expect(k.inFlight('/q')).toBe(0) // waiting: no slot held
    releaseHeld()
    await waitFor(() => app.calls === 1, { what: 'the queued request to be admitted' })
    expect(k.inFlight('/q')).toBe(1)
    expect((await get(port, {}, '/q')).status).toBe(429) // the key's one slot is taken by the admitted request
    app.open()
    expect((await queued).status).toBe(200)
    await settled(k, '/q')
    await waitFor(() => limiter.inFlight === 0, { what: "the adaptive limiter's token to come back" })
    expect(limiter.stats().invalidReleases).toBe(0)
    limiter.close()
  })
}

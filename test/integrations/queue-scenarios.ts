// The admission queue (docs/rules/queue.md) through every inbound adapter, over real sockets: a request the limiter
// refuses waits for a slot, and is admitted, answered 503 'queue-timeout', or forgotten when its client goes away.
import { expect, it, vi } from 'vitest'

import { BbrLimiter, type BbrLimiterOptions } from '../../lib/index'
import type { InboundGuardOptions } from '../../lib/entries/http'
import { ManualClock } from '../helpers/manual-clock'
import { loopTurns } from '../helpers/loop-turns'
import { waitFor } from '../helpers/wait-for'
import type { Reply, ScenarioClient } from './inbound-scenarios'

/**
 * A limiter over its limit (3 critical requests held, load 900) with a queue of `maxWait` ms (or `options`) on a
 * clock the test moves.
 */
export function fullLimiter(maxWait: number, options: BbrLimiterOptions = {}) {
  const load = { value: 0 }
  const clock = new ManualClock(1000)
  const limiter = new BbrLimiter({
    window: 1000,
    buckets: 10,
    minInFlight: 2,
    cooldown: 0,
    queueDelay: false,
    latency: false,
    signal: () => load.value,
    now: clock.now,
    maxWait,
    ...options,
  })
  const held = [0, 1, 2].map(() => limiter.tryAcquire('critical'))
  load.value = 900
  const releaseHeld = () => held.splice(0).forEach((t) => limiter.release(t))
  return { limiter, clock, releaseHeld }
}

const queueLength = (limiter: BbrLimiter) => limiter.stats().queue?.length

/** Registers the queue scenarios for one adapter; `open` starts its server (the app counts its calls). */
export function queueScenarios(
  open: (guard: InboundGuardOptions<any>) => Promise<number>,
  calls: () => number,
  client: ScenarioClient,
): void {
  it('queues a refused request and admits it when a slot is freed, its token released exactly once', async () => {
    const { limiter, releaseHeld } = fullLimiter(60_000)
    const release = vi.spyOn(limiter, 'release')
    const port = await open({ limiter })
    const reply = client.get(port)
    await waitFor(() => queueLength(limiter) === 1, { what: 'the request to wait in the queue' })
    expect(calls()).toBe(0)
    releaseHeld()
    const r: Reply = await reply
    expect(r.status).toBe(200)
    expect(calls()).toBe(1)
    await waitFor(() => limiter.inFlight === 0, { what: 'in-flight to return to 0' })
    const s = limiter.stats()
    expect(s).toMatchObject({ shed: 0, invalidReleases: 0, queue: { queued: 1, admitted: 1, length: 0 } })
    expect(release).toHaveBeenCalledTimes(4) // 3 held + the queued request, once
    limiter.close()
  })

  it('answers 503 with reason queue-timeout after maxWait, the handler never called', async () => {
    const { limiter, clock, releaseHeld } = fullLimiter(50)
    const port = await open({ limiter, retryAfter: 3 })
    const reply = client.get(port)
    await waitFor(() => queueLength(limiter) === 1, { what: 'the request to wait in the queue' })
    clock.advance(50)
    const r = await reply
    expect(r.status).toBe(503)
    expect(r.headers['retry-after']).toBe('3')
    expect(JSON.parse(r.body)).toEqual({ error: 'overloaded', reason: 'queue-timeout' })
    expect(calls()).toBe(0)
    expect(limiter.stats().queue).toMatchObject({ timedOut: 1, length: 0 })
    releaseHeld()
    expect(limiter.inFlight).toBe(0)
    limiter.close()
  })

  it('frees the place of a request whose client went away while it waited; nothing runs, nothing leaks', async () => {
    const { limiter, releaseHeld } = fullLimiter(60_000)
    const release = vi.spyOn(limiter, 'release')
    const port = await open({ limiter })
    const request = client.start(port, '/work')
    await waitFor(() => queueLength(limiter) === 1, { what: 'the request to wait in the queue' })
    request.abort()
    await waitFor(() => limiter.stats().queue?.abandoned === 1, { what: 'the waiter to be abandoned' })
    expect(queueLength(limiter)).toBe(0)
    releaseHeld()
    await loopTurns() // the queue retries its waiters in a microtask after a release: a kept waiter is admitted then
    expect(calls()).toBe(0)
    expect(limiter.stats()).toMatchObject({ inFlight: 0, invalidReleases: 0, queue: { admitted: 0 } })
    expect(release).toHaveBeenCalledTimes(3)
    limiter.close()
  })
}

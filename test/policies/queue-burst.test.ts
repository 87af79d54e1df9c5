import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { BbrLimiter } from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'

const NORMAL = 2

/**
 * The limiter in front of a service that works on LIMIT requests at once at full speed, SERVICE ms each, and shares
 * itself among more (processor sharing: capacity LIMIT / SERVICE per ms), the load pinned over the threshold.
 * Offered: a square wave of 1.2x capacity for 200 ms, then 0.7x for 300 ms. Returns the refusals and the admitted
 * requests' latencies (arrival to completion, their wait included) after the first second.
 */
async function squareWave(maxWait: number | undefined, seconds = 6) {
  const SERVICE = 10
  const LIMIT = 20
  const clock = new ManualClock()
  const working: Array<{ token: number; work: number; arrived: number }> = []
  const limiter = new BbrLimiter({
    now: clock.now,
    // The service's CPU: busy in proportion to the requests it works on, up to LIMIT.
    signal: () => Math.min(1000, (1000 * working.length) / LIMIT),
    minInFlight: LIMIT, // the estimate at the service's true concurrency: the bursts, not the estimate, are what sheds
    queueDelay: false,
    latency: false,
    maxWait,
  })
  const latencies: number[] = []
  let refused = 0
  let offered = 0
  let due = 0
  const capacityPerMs = LIMIT / SERVICE
  const start = (token: number, arrived: number) => working.push({ token, work: SERVICE, arrived })
  for (let ms = 0; ms < seconds * 1000; ms++) {
    clock.time = ms
    const speed = Math.min(1, LIMIT / Math.max(1, working.length))
    for (let i = working.length - 1; i >= 0; i--) {
      const r = working[i]
      r.work -= speed
      if (r.work > 1e-9) continue
      working.splice(i, 1)
      limiter.release(r.token)
      if (r.arrived >= 1000) latencies.push(ms - r.arrived)
    }
    await Promise.resolve() // the queue retries its waiters in a microtask after releases
    vi.advanceTimersByTime(1) // and on its timer (after the work of this ms, so that a request starts as any other)
    const counted = ms >= 1000
    due += (ms % 500 < 200 ? 1.2 : 0.7) * capacityPerMs
    for (; due >= 1; due--) {
      if (counted) offered++
      const token = limiter.tryAcquire(NORMAL)
      if (token >= 0) {
        start(token, ms)
        continue
      }
      const arrived = ms
      const waiter = limiter.waitForSlot(token, NORMAL, undefined, (t) => {
        if (t >= 0) start(t, arrived)
        else if (arrived >= 1000) refused++
      })
      if (waiter === undefined && counted) refused++
    }
  }
  latencies.sort((a, b) => a - b)
  const p99 = latencies[Math.floor(0.99 * (latencies.length - 1))]
  const stats = limiter.stats()
  limiter.close()
  return { refused, offered, p99, served: latencies.length, stats }
}

describe('the admission queue under square-wave bursts (docs/rules/queue.md)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('turns 503s of 1.2x bursts into short waits, each admitted request within the service time plus maxWait', async () => {
    const atOnce = await squareWave(undefined)
    const short = await squareWave(50)
    const long = await squareWave(150)
    // Shedding at once refuses the excess of every burst (0.2x capacity for 200 ms: about 80 requests).
    expect(atOnce.refused).toBeGreaterThan(0.05 * atOnce.offered)
    // A queue serves the excess in the dip that follows, as far as maxWait lets it wait: a 200 ms burst's excess
    // drains within about 130 ms of spare capacity, so maxWait 50 keeps some of it and 150 most of it (the queue
    // stands past its target meanwhile: newest first, and the oldest waiters of the burst run out their time).
    expect(short.refused).toBeLessThan(atOnce.refused)
    expect(long.refused).toBeLessThan(0.5 * atOnce.refused)
    expect(long.served).toBeGreaterThan(atOnce.served)
    for (const [queued, maxWait] of [
      [short, 50],
      [long, 150],
    ] as const) {
      expect(queued.p99).toBeLessThanOrEqual(atOnce.p99 + maxWait)
      expect(queued.stats.queue?.timedOut).toBe(
        queued.stats.queue!.queued - queued.stats.queue!.admitted - queued.stats.queue!.length,
      )
    }
  })
})

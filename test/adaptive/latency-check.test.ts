import { describe, expect, it } from 'vitest'

import { BbrLimiter, type BbrLimiterOptions, Priority, Shed } from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'
import { seededRandom } from '../helpers/seeded-random.mjs'
import { fieldOf } from '../helpers/typed-errors'
import { quantile, simulateUpstream, type UpstreamPhase } from './upstream-sim'

// An upstream that serves 8 requests at a time, 20 ms each (400 req/s), and queues the rest: the gateway in
// front of it has an idle CPU, so only the latency rule can protect it.
const C = 8
const SERVICE = 20
const CAPACITY = (1000 / SERVICE) * C

/** A BbrLimiter whose CPU and event-loop rules never fire: what sheds here is the latency rule alone. */
function ioLimiter(options: BbrLimiterOptions = {}) {
  const clock = new ManualClock(1000)
  const limiter = new BbrLimiter({ signal: () => 0, queueDelay: false, now: clock.now, ...options })
  return { clock, limiter }
}

function phase(load: number, seconds: number, extra: Partial<UpstreamPhase> = {}): UpstreamPhase {
  return { rate: load * CAPACITY, seconds, concurrency: C, serviceMs: SERVICE, ...extra }
}

/** Requests due from `fromSecond` on: their latencies' p99 and the completions of every second from then. */
const after = (r: ReturnType<typeof simulateUpstream>[number], fromSecond: number) => ({
  completedPerSecond: r.perSecond.slice(fromSecond).map((s) => s.completed),
  maxInFlight: Math.max(...r.perSecond.slice(fromSecond).map((s) => s.maxInFlight)),
})

describe('BbrLimiter: the latency rule in front of an upstream that queues', () => {
  it('at 3x keeps the upstream busy with a short queue, and sheds the excess', () => {
    const { clock, limiter } = ioLimiter()
    const [warm, overload, calm] = simulateUpstream(limiter, clock, [phase(0.5, 3), phase(3, 20), phase(0.5, 5)])
    expect(warm.shed).toBe(0)
    const steady = after(overload, 2)
    // A second with a probe (the base measured again) gives up a few percent; the run as a whole almost none.
    for (const done of steady.completedPerSecond) expect(done).toBeGreaterThanOrEqual(0.9 * CAPACITY)
    const total = steady.completedPerSecond.reduce((a, b) => a + b, 0)
    expect(total).toBeGreaterThanOrEqual(0.97 * CAPACITY * steady.completedPerSecond.length)
    expect(steady.maxInFlight).toBeLessThanOrEqual(3 * C) // unprotected, it grows by 800 every second
    expect(overload.shed / overload.offered).toBeGreaterThan(0.6)
    expect(limiter.stats().shedLatency).toBe(overload.shed + calm.shed)
    // The queue stops growing once the rule engages: no request waits as long as a second.
    expect(overload.latencies.at(-1)).toBeLessThan(1000)
    expect(quantile(overload.latencies, 0.9)).toBeLessThan(3 * SERVICE)
    // Back at 0.5x, shedding stops within the first second.
    expect(calm.perSecond.slice(1).every((s) => s.shed === 0)).toBe(true)
  })

  it('measures every response time while it probes, so that a probe is short even when 1 in 8 is sampled', () => {
    const { clock, limiter } = ioLimiter({ rtSampling: 8 })
    const [, overload] = simulateUpstream(limiter, clock, [phase(0.5, 3), phase(3, 20)])
    expect(limiter.stats().latency?.probes).toBeGreaterThanOrEqual(2)
    const steady = after(overload, 2).completedPerSecond
    for (const done of steady) expect(done).toBeGreaterThanOrEqual(0.9 * CAPACITY)
    expect(steady.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(0.97 * CAPACITY * steady.length)
  })

  it("tolerates its own event loop's delay on top of the base: a late loop is no queue at the upstream", () => {
    // The loop 30 ms late: a request whose answer waits for it takes 30 ms more, and the requests in flight hold
    // answers waiting for it, with no queue at the upstream. A burst that queues about 30 ms at the upstream
    // (1.2x for 150 ms) is then within what is tolerated; at 3x the limit keeps room for the answers that wait.
    const burst = [phase(0.5, 3), phase(1.2, 0.15), phase(0.5, 2)]
    const late = ioLimiter({ latency: { loopDelay: () => 30 } })
    const punctual = ioLimiter()
    const shedIn = (runs: ReturnType<typeof simulateUpstream>) => runs.reduce((sum, r) => sum + r.shed, 0)
    expect(shedIn(simulateUpstream(late.limiter, late.clock, burst))).toBe(0)
    expect(shedIn(simulateUpstream(punctual.limiter, punctual.clock, burst))).toBeGreaterThan(0)
    const overload = [phase(0.5, 3), phase(3, 5)]
    const lateRun = ioLimiter({ latency: { loopDelay: () => 30 } })
    const punctualRun = ioLimiter()
    const [, lateOverload] = simulateUpstream(lateRun.limiter, lateRun.clock, overload)
    simulateUpstream(punctualRun.limiter, punctualRun.clock, overload)
    const limit = (l: BbrLimiter) => l.stats().latency?.limit ?? 0
    // What the upstream completes in 30 ms (400/s x 30 ms = 12) more, give or take the square-root headroom.
    expect(limit(lateRun.limiter) - limit(punctualRun.limiter)).toBeGreaterThan(8)
    expect(after(lateOverload, 2).maxInFlight).toBeLessThanOrEqual(5 * C) // still bounded
  })

  it('at 10x still serves the upstream whole and bounds the queue', () => {
    const { clock, limiter } = ioLimiter()
    const [warm, overload] = simulateUpstream(limiter, clock, [phase(0.5, 2), phase(10, 10)])
    expect(warm.shed).toBe(0)
    const steady = after(overload, 3)
    for (const done of steady.completedPerSecond) expect(done).toBeGreaterThanOrEqual(0.9 * CAPACITY)
    expect(steady.maxInFlight).toBeLessThanOrEqual(3 * C)
  })

  it('sheds nothing at 0.5x and 0.95x with service times varying by half, from a cold start', () => {
    const random = seededRandom(7)
    const jitter = () => SERVICE * (0.5 + random())
    const { clock, limiter } = ioLimiter()
    const results = simulateUpstream(limiter, clock, [
      phase(0.5, 30, { serviceMs: jitter }),
      phase(0.95, 30, { serviceMs: jitter }),
    ])
    expect(results.map((r) => r.shed)).toEqual([0, 0])
    expect(limiter.stats().latency?.baseRt).toBeGreaterThan(0.5 * SERVICE)
  })

  it('sheds nothing for a 150 ms pause of the gateway (a garbage collection) at normal load', () => {
    const { clock, limiter } = ioLimiter()
    const results = simulateUpstream(limiter, clock, [
      phase(0.8, 5),
      phase(0.8, 5, { pause: { at: 1000, ms: 150 } }),
      phase(0.8, 5, { pause: { at: 2000, ms: 150 } }),
    ])
    expect(results.map((r) => r.shed)).toEqual([0, 0, 0])
  })

  it('follows the upstream losing half its concurrency within 2 s', () => {
    const { clock, limiter } = ioLimiter()
    const [, halved] = simulateUpstream(limiter, clock, [phase(3, 10), phase(3, 10, { concurrency: C / 2 })])
    const steady = after(halved, 2)
    for (const done of steady.completedPerSecond) expect(done).toBeGreaterThanOrEqual(0.95 * (CAPACITY / 2))
    expect(steady.maxInFlight).toBeLessThanOrEqual(3 * (C / 2))
    expect(limiter.stats().latency?.baseRt).toBeLessThan(1.2 * SERVICE) // the same service time: the same base
  })

  it('follows the upstream slowing down to twice its service time within 2 s (the base is learned again)', () => {
    const { clock, limiter } = ioLimiter()
    const bases: number[] = []
    const slow = { serviceMs: 2 * SERVICE }
    const [, slowed, later] = simulateUpstream(
      limiter,
      clock,
      [phase(3, 10), phase(3, 2, slow), phase(3, 5, slow)],
      () => bases.push(limiter.stats().latency?.baseRt ?? 0),
    )
    expect(bases[0]).toBeLessThan(1.1 * SERVICE)
    expect(bases[1]).toBeGreaterThanOrEqual(0.9 * 2 * SERVICE)
    expect(bases[1]).toBeLessThanOrEqual(1.2 * 2 * SERVICE)
    expect(slowed.perSecond[1].completed).toBeGreaterThanOrEqual(0.9 * (CAPACITY / 2))
    for (const done of later.perSecond.map((s) => s.completed))
      expect(done).toBeGreaterThanOrEqual(0.85 * (CAPACITY / 2))
  })

  it('keeps its base from drifting up under two minutes of overload, probing less and less often', () => {
    const { clock, limiter } = ioLimiter()
    const [overload] = simulateUpstream(limiter, clock, [phase(3, 120)])
    const latency = limiter.stats().latency
    expect(latency?.baseRt).toBeLessThan(1.15 * SERVICE)
    expect(latency?.probes).toBeGreaterThanOrEqual(3)
    expect(latency?.probes).toBeLessThanOrEqual(12) // gaps of 1, 2, 4, ... 32 s once the base is confirmed
    for (const done of after(overload, 2).completedPerSecond) expect(done).toBeGreaterThanOrEqual(0.9 * CAPACITY)
  })

  it('at exactly its capacity keeps the probe schedule across pauses in shedding, and sheds under 2 %', () => {
    // Jittered service times at 1x: shedding stops and starts every few seconds. A probe 1 s after every start
    // made 9 to 10 probes in the minute and shed 2.2 to 2.6 %.
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed)
      const jitter = () => SERVICE * (0.5 + random())
      const { clock, limiter } = ioLimiter()
      const [, run] = simulateUpstream(limiter, clock, [
        phase(0.5, 3, { serviceMs: jitter }),
        phase(1, 60, { serviceMs: jitter }),
      ])
      expect(run.shed / run.offered).toBeLessThan(0.02)
      expect(limiter.stats().latency?.probes).toBeLessThanOrEqual(6)
    }
  })

  it('serves an upstream that changed during a calm spell, while the next probe is still far ahead', () => {
    // 40 s of 3x confirm the base until probes are 32 s apart (the next one is 21 s ahead when 5 s at 0.5x end);
    // then the upstream turns twice as slow, or twice as fast, at 3x. The stale base is corrected at that probe;
    // until then the limit still follows the completion rate, so the upstream is served and its queue bounded.
    for (const serviceMs of [2 * SERVICE, SERVICE / 2]) {
      const { clock, limiter } = ioLimiter()
      const [, , changed] = simulateUpstream(limiter, clock, [phase(3, 40), phase(0.5, 5), phase(3, 10, { serviceMs })])
      const capacity = (1000 / serviceMs) * C
      for (const done of changed.perSecond.slice(1).map((s) => s.completed))
        expect(done).toBeGreaterThanOrEqual(0.9 * capacity)
      expect(after(changed, 1).maxInFlight).toBeLessThanOrEqual(4 * C)
    }
  })

  it('bounds the requests in flight to an upstream that stops answering', () => {
    const { clock, limiter } = ioLimiter()
    const [, hung] = simulateUpstream(limiter, clock, [phase(0.5, 3), phase(0.5, 5, { serviceMs: 1e9 })])
    expect(hung.completed).toBe(0)
    const held = hung.perSecond.map((s) => s.maxInFlight)
    expect(held[0]).toBeLessThan(100) // half a second of arrivals at most
    expect(new Set(held.slice(1)).size).toBe(1) // and not one more after that
    expect(hung.shed).toBeGreaterThan(0.8 * hung.offered)
  })

  it('sheds low-priority requests first and keeps headroom for critical ones', () => {
    const { clock, limiter } = ioLimiter()
    const priority = (i: number) => (i % 10 === 0 ? Priority.critical : i % 10 < 5 ? Priority.normal : Priority.low)
    simulateUpstream(limiter, clock, [phase(0.5, 2, { priority }), phase(3, 10, { priority })])
    const c = limiter.stats().byPriority
    const shedShare = (k: keyof typeof c) => c[k].shedLatency / (c[k].shedLatency + c[k].admitted)
    expect(shedShare('critical')).toBeLessThan(0.1)
    expect(shedShare('normal')).toBeLessThan(shedShare('low'))
  })

  it('answers Shed.latency and execute() rejects with reason latency', async () => {
    const { clock, limiter } = ioLimiter()
    simulateUpstream(limiter, clock, [phase(3, 3)])
    expect(limiter.stats().latency?.shedding).toBe(true)
    const held: number[] = []
    let token = limiter.tryAcquire()
    for (; token >= 0; token = limiter.tryAcquire()) held.push(token)
    expect(token).toBe(Shed.latency)
    await expect(limiter.execute(() => 1)).rejects.toMatchObject({ code: 'ERR_BULWARK_OVERLOAD', reason: 'latency' })
    for (const t of held) limiter.release(t)
  })

  it('is off with latency: false (the queue then grows without bound)', () => {
    const { clock, limiter } = ioLimiter({ latency: false })
    const [overload] = simulateUpstream(limiter, clock, [phase(3, 3)])
    expect(overload.shed).toBe(0)
    expect(limiter.stats().latency).toBeUndefined()
    expect(limiter.inFlight).toBeGreaterThan(1000)
  })

  it('validates its options, naming the field', () => {
    expect(fieldOf(() => new BbrLimiter({ latency: { buffer: -1 } }))).toBe('latency.buffer')
    expect(fieldOf(() => new BbrLimiter({ latency: { minLimit: 0 } }))).toBe('latency.minLimit')
    expect(fieldOf(() => new BbrLimiter({ latency: { minLimit: 10, maxLimit: 5 } }))).toBe('latency.maxLimit')
    expect(fieldOf(() => new BbrLimiter({ latency: { probeInterval: Number.NaN } }))).toBe('latency.probeInterval')
    expect(fieldOf(() => new BbrLimiter({ latency: 'on' as never }))).toBe('latency')
  })
})

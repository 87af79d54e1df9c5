import { describe, expect, it } from 'vitest'

import { BbrLimiter, Shed } from '../../lib/index'
import { QueueDelayController } from '../../lib/admission/limits/queue-delay-controller'
import { ManualClock } from '../helpers/manual-clock'

function delayed(target = 10, interval = 100) {
  const clock = new ManualClock()
  // With an injected signal the loop counts as saturated while the load is at or over the threshold (800).
  const input = { delay: 0, load: 1000 }
  const limiter = new BbrLimiter({
    window: 1000,
    buckets: 10,
    minInFlight: 1000, // keep the in-flight rule out of these tests
    now: clock.now,
    signal: { load: () => input.load, delay: () => input.delay },
    queueDelay: { target, interval },
  })
  /** Offers `n` requests of a class over `ms` of clock time (released at once) and returns how many were admitted. */
  const offer = (n: number, ms: number, priority: 'critical' | 'high' | 'normal' | 'low' = 'normal') => {
    let admitted = 0
    for (let i = 0; i < n; i++) {
      clock.advance(ms / n)
      const token = limiter.tryAcquire(priority)
      if (token >= 0) {
        admitted++
        limiter.release(token)
      } else {
        expect(token).toBe(Shed.queueDelay)
      }
    }
    return admitted
  }
  return { limiter, clock, input, offer }
}

describe('BbrLimiter: the queueing-delay rule (the queue Node hides)', () => {
  it('never sheds while the delay stays under target, even with nothing in flight', () => {
    const { input, offer } = delayed()
    input.delay = 9
    expect(offer(1000, 2000)).toBe(1000)
  })

  it('does not shed while the loop still catches up, however long its stretches (coarse handlers)', () => {
    const { input, offer } = delayed()
    input.delay = 40
    input.load = 600
    expect(offer(1000, 2000)).toBe(1000)
  })

  it('tolerates a burst shorter than the interval', () => {
    const { input, offer } = delayed()
    input.delay = 50
    expect(offer(90, 90)).toBe(90)
  })

  it('sheds in proportion to how far over target the delay stays, and recovers when it falls', () => {
    const { limiter, input, offer } = delayed()
    input.delay = 80
    offer(125, 125) // the interval passes (counted from the first step with a request before it)
    offer(100, 100) // four control steps cutting by sqrt(10 / 80), bounded to 0.7 per step
    const before = limiter.stats().admitFraction
    expect(before).toBeCloseTo(0.7 ** 4, 9)
    // Admission follows the fraction exactly (error diffusion, no random draw); a control step may fall inside.
    const admitted = offer(1000, 10)
    const after = limiter.stats().admitFraction
    expect(admitted).toBeGreaterThanOrEqual(Math.floor(1000 * after) - 1)
    expect(admitted).toBeLessThanOrEqual(Math.ceil(1000 * before) + 1)

    input.delay = 2
    offer(200, 200) // right after a cut it rises by small additive steps
    const careful = limiter.stats().admitFraction
    expect(careful).toBeGreaterThan(after)
    expect(careful).toBeLessThan(after + 0.2)
    offer(1500, 1500) // then multiplicatively
    expect(limiter.stats().admitFraction).toBe(1)
    expect(offer(100, 100)).toBe(100)
  })

  it('settles where the delay sits at target: a delay of exactly target stops the decline', () => {
    const { limiter, input, offer } = delayed()
    input.delay = 20
    offer(300, 300)
    const after = limiter.stats().admitFraction
    input.delay = 10
    offer(300, 300)
    expect(limiter.stats().admitFraction).toBeGreaterThanOrEqual(after)
  })

  it('sheds low before normal before high, and never critical', () => {
    const { input, offer } = delayed()
    input.delay = 30
    offer(100, 200) // fraction falls to about 1/3 ... lower
    const admitted = {
      critical: offer(300, 3, 'critical'),
      high: offer(300, 3, 'high'),
      normal: offer(300, 3, 'normal'),
      low: offer(300, 3, 'low'),
    }
    expect(admitted.critical).toBe(300)
    expect(admitted.high).toBeGreaterThan(admitted.normal)
    expect(admitted.normal).toBeGreaterThan(admitted.low)
    expect(admitted.low).toBeGreaterThan(0) // some traffic always flows
  })

  it('is off with a function signal (it replaces every measured input) or queueDelay: false', () => {
    const a = new BbrLimiter({ signal: () => 0 })
    const b = new BbrLimiter({ queueDelay: false, minInFlight: 1e6, signal: { load: () => 1000, delay: () => 1e6 } })
    for (let i = 0; i < 1000; i++) {
      expect(a.tryAcquire()).toBeGreaterThanOrEqual(0)
      expect(b.tryAcquire()).toBeGreaterThanOrEqual(0)
    }
    expect(a.stats().admitFraction).toBe(1)
  })
})

describe('QueueDelayController: the target scales with the service time', () => {
  it('does not read stretches of a few coarse handlers as a standing queue', async () => {
    const { QueueDelayController } = await import('../../lib/admission/limits/queue-delay-controller')
    const signal = { delay: 20, serviceTime: 30 }
    const controller = new QueueDelayController(
      { target: 10, interval: 100 },
      { delay: () => signal.delay, saturated: () => true, serviceTime: () => signal.serviceTime },
    )
    for (let now = 0; now <= 1000; now += 25) controller.update(now)
    expect(controller.fraction).toBe(1) // 20 ms is under 0.75 x 30 ms
    signal.serviceTime = 2 // the same stretches with 2 ms handlers are a queue
    for (let now = 1025; now <= 1500; now += 25) controller.update(now)
    expect(controller.fraction).toBeLessThan(1)
  })
})

describe('QueueDelayController: a loop busy without requests', () => {
  function controller() {
    const state = { at: 0, activeAt: -Infinity, now: 0 }
    const c = new QueueDelayController(
      { target: 10, interval: 100 },
      {
        delay: () => 80,
        saturated: () => true,
        measuredAt: () => state.at,
        span: () => 50,
        requestsSince: (since) => state.activeAt >= since,
      },
    )
    /** Measurements every 50 ms for `ms`, the limiter active at each one when `active`. */
    const run = (ms: number, active: boolean) => {
      for (let t = 0; t < ms; t += 50) {
        state.now += 50
        state.at = state.now
        if (active) state.activeAt = state.now
        c.update(state.now)
      }
    }
    return { c, state, run }
  }

  it('does not shed on a loop that stayed busy while the limiter admitted nothing (start-up work)', () => {
    const { c, state, run } = controller()
    state.activeAt = 0 // one request at the very start, then start-up work only
    run(2000, false)
    expect(c.fraction).toBe(1)
  })

  it('sheds once requests are what keeps it busy', () => {
    const { c, run } = controller()
    run(1000, false)
    run(300, true)
    expect(c.fraction).toBeLessThan(1)
  })
})

describe("BbrLimiter: the queueing-delay rule's target follows the service time", () => {
  it('reads minRt as the windows hold it now, even while the load stays under the threshold', () => {
    const clock = new ManualClock(1000)
    // The measured signal (the loop's own delay; the target is floored by 0.75 of minRt), a threshold the loop of
    // this test never reaches (the CPU rule would ask for the estimate too).
    const limiter = new BbrLimiter({
      window: 1000,
      buckets: 10,
      now: clock.now,
      latency: false,
      signal: 'elu',
      cpuThreshold: 1000,
    })
    // Requests of 30 ms each, load under the threshold: nothing but this rule asks for the estimate.
    for (let at = 1000; at < 1600; at += 5) {
      clock.time = at
      const token = limiter.tryAcquire()
      clock.time = at + 30
      limiter.release(token)
    }
    clock.time = 1700
    // The service time the rule's target is floored by (white box: the target is not in stats()).
    const rule = (limiter as unknown as { checks: { delayCheck: { signal: { serviceTime: () => number } } } }).checks
      .delayCheck
    expect(rule.signal.serviceTime()).toBeCloseTo(30, 6)
    limiter.close()
  })
})

import { describe, expect, it } from 'vitest'

import { BreakerGroup, BreakerOpenError, SreBreaker, type SreBreakerOptions } from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'
import { seededRandom } from '../helpers/seeded-random.mjs'

// The reference tests' breaker: K = 2, minimum 100 requests, window 1000 ms in 10 buckets.
function referenceBreaker(extra: SreBreakerOptions = {}) {
  const clock = new ManualClock(5_000)
  const breaker = new SreBreaker({
    success: 0.5,
    minimumCalls: 100,
    window: 1000,
    buckets: 10,
    now: clock.now,
    random: seededRandom(42),
    ...extra,
  })
  return { clock, breaker }
}

function repeat(n: number, fn: () => void) {
  for (let i = 0; i < n; i++) fn()
}

describe('SreBreaker: reference tests (docs/rules/sre-breaker.md)', () => {
  it('allows 80 successes, then 120 more', () => {
    const { breaker } = referenceBreaker()
    repeat(80, () => breaker.recordSuccess())
    expect(breaker.tryAcquire()).toBe(true)
    repeat(120, () => breaker.recordSuccess())
    expect(breaker.tryAcquire()).toBe(true)
    expect(breaker.state).toBe('closed')
  })

  it('rejects after 100 successes and 10 000 000 failures, and allows again once the window has passed', () => {
    const { breaker, clock } = referenceBreaker()
    repeat(100, () => breaker.recordSuccess())
    repeat(10_000_000, () => breaker.recordFailure())
    expect(breaker.tryAcquire()).toBe(false)
    expect(breaker.state).toBe('open')
    clock.advance(1000)
    expect(breaker.tryAcquire()).toBe(true)
    expect(breaker.state).toBe('closed')
  })

  it('allows 99 failures: below the minimum number of requests', () => {
    const { breaker } = referenceBreaker()
    repeat(99, () => breaker.recordFailure())
    expect(breaker.tryAcquire()).toBe(true)
  })

  it('summarises accepts and calls over the window', () => {
    const summary = (b: SreBreaker) => [b.stats().accepts, b.stats().calls]
    const a = referenceBreaker()
    repeat(10, () => a.breaker.recordSuccess())
    expect(summary(a.breaker)).toEqual([10, 10])
    const b = referenceBreaker()
    repeat(10, () => b.breaker.recordFailure())
    expect(summary(b.breaker)).toEqual([0, 10])
    const c = referenceBreaker()
    repeat(5, () => c.breaker.recordSuccess())
    repeat(5, () => c.breaker.recordFailure())
    expect(summary(c.breaker)).toEqual([5, 10])
    c.clock.advance(1000)
    expect(summary(c.breaker)).toEqual([0, 0])
  })

  it('default breaker: 1000 successes and 100 failures are allowed; a group key with 10 000 failures is rejected', () => {
    const clock = new ManualClock(1)
    const breaker = new SreBreaker({ now: clock.now, random: seededRandom(1) })
    repeat(1000, () => breaker.recordSuccess())
    repeat(100, () => breaker.recordFailure())
    expect(breaker.tryAcquire()).toBe(true)

    const group = new BreakerGroup(() => new SreBreaker({ now: clock.now, random: seededRandom(2) }), {
      now: clock.now,
    })
    const failing = group.get('failing-service') as SreBreaker
    repeat(10_000, () => failing.recordFailure())
    expect(group.get('failing-service')?.tryAcquire()).toBe(false)
    expect(group.get('healthy-service')?.tryAcquire()).toBe(true)
  })
})

describe('SreBreaker: drop frequency', () => {
  // accepts, failures -> p = (total - 2 * accepts) / (total + 1) with K = 2
  const cases: Array<[number, number]> = [
    [300, 500],
    [100, 300],
    [50, 950],
  ]
  for (const [accepts, failures] of cases) {
    const total = accepts + failures
    const p = Math.max(0, (total - 2 * accepts) / (total + 1))
    it(`rejects ${(p * 100).toFixed(1)} % of 100 000 calls with ${accepts} accepts of ${total} (within 2 %)`, () => {
      const { breaker } = referenceBreaker({ countRejections: false, random: seededRandom(accepts * 7919 + failures) })
      repeat(accepts, () => breaker.recordSuccess())
      repeat(failures, () => breaker.recordFailure())
      expect(breaker.stats().dropProbability).toBeCloseTo(p, 12)
      let rejected = 0
      repeat(100_000, () => {
        if (!breaker.tryAcquire()) rejected++
      })
      const observed = rejected / 100_000
      expect(Math.abs(observed - p) / p).toBeLessThan(0.02)
    })
  }

  it('allows everything while total < K * accepts, even above the minimum', () => {
    const { breaker } = referenceBreaker()
    repeat(300, () => breaker.recordSuccess())
    repeat(299, () => breaker.recordFailure())
    let rejected = 0
    repeat(10_000, () => {
      if (!breaker.tryAcquire()) rejected++
    })
    expect(rejected).toBe(0)
    expect(breaker.stats()).toMatchObject({ accepts: 300, calls: 599, dropProbability: 0, state: 'closed' })
  })
})

describe('SreBreaker: rejected calls', () => {
  it('counts each rejection as a failed request by default', () => {
    const { breaker } = referenceBreaker()
    repeat(100, () => breaker.recordSuccess())
    repeat(900, () => breaker.recordFailure())
    let rejected = 0
    repeat(1000, () => {
      if (!breaker.tryAcquire()) rejected++
    })
    expect(rejected).toBeGreaterThan(700)
    expect(breaker.stats().calls).toBe(1000 + rejected)
    expect(breaker.stats().accepts).toBe(100)
  })

  it('leaves the counts alone with countRejections: false', () => {
    const { breaker } = referenceBreaker({ countRejections: false })
    repeat(100, () => breaker.recordSuccess())
    repeat(900, () => breaker.recordFailure())
    repeat(1000, () => breaker.tryAcquire())
    expect(breaker.stats().calls).toBe(1000)
  })

  it('keeps the traffic it lets through near accepts / success when rejections count, whatever the offered load', () => {
    // A backend that accepts 100 calls per 100 ms bucket and refuses the rest; offered load 2x and 10x that.
    const passed = (offeredPerBucket: number, countRejections = true) => {
      const { breaker, clock } = referenceBreaker({ random: seededRandom(offeredPerBucket), countRejections })
      let sent = 0
      for (let bucket = 0; bucket < 100; bucket++) {
        let accepted = 0
        for (let i = 0; i < offeredPerBucket; i++) {
          if (!breaker.tryAcquire()) continue
          if (bucket >= 50) sent++
          if (accepted < 100) {
            accepted++
            breaker.recordSuccess()
          } else breaker.recordFailure()
        }
        clock.advance(100)
      }
      return sent / 50
    }
    // K = 2: about 2 x 100 per bucket get through at 2x and at 10x offered load alike.
    for (const offered of [200, 1000]) {
      const perBucket = passed(offered)
      expect(perBucket).toBeGreaterThan(170)
      expect(perBucket).toBeLessThan(230)
    }
    // Not counting them, what gets through grows with the offered load (about sqrt(K * capacity * offered)).
    expect(passed(1000, false)).toBeGreaterThan(400)
  })
})

describe('SreBreaker: execute', () => {
  it('marks the outcome of the call and rejects with BreakerOpenError when refused', async () => {
    const { breaker } = referenceBreaker({ countRejections: false })
    await expect(breaker.execute(() => 'ok')).resolves.toBe('ok')
    await expect(breaker.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down')
    expect(breaker.stats()).toMatchObject({ accepts: 1, calls: 2 })
    repeat(10_000, () => breaker.recordFailure())
    let refused: unknown
    for (let i = 0; i < 100 && refused === undefined; i++) {
      await breaker.execute(() => 1).catch((e) => (refused = e))
    }
    expect(refused).toBeInstanceOf(BreakerOpenError)
    expect((refused as BreakerOpenError).code).toBe('ERR_BULWARK_BREAKER_OPEN')
  })
})

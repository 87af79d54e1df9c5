import { describe, expect, it } from 'vitest'

import { referenceLimiter } from './bbr-harness'

// docs/rules/bbr.md, through the public API, with our fractional minRt (the reference's numbers in comments).
describe('BbrLimiter: the reference behaviour', () => {
  it('maxPass is the busiest completed bucket, and 1 when fresh', () => {
    const fresh = referenceLimiter()
    expect(fresh.limiter.stats().maxPass).toBe(1)

    const { limiter, clock, complete } = referenceLimiter()
    for (let i = 1; i <= 10; i++) for (let n = 0; n < i * 100; n++) complete((i - 1) * 100 + 10)
    clock.time = 1010
    expect(limiter.stats().maxPass).toBe(1000)
  })

  it('minRt is the smallest bucket mean, excluding the bucket in progress (5.5, reference 6)', () => {
    const { limiter, clock, fill } = referenceLimiter()
    fill(() => 10)
    clock.time = 950
    expect(limiter.stats().minRt).toBeCloseTo(5.5, 9)
  })

  it('minRt is 1 without data', () => {
    expect(referenceLimiter().limiter.stats().minRt).toBe(1)
  })

  it('maxInFlight = maxPass * minRt * bucketsPerSecond / 1000 (55, reference 60)', () => {
    const { limiter, clock, fill } = referenceLimiter({ minInFlight: 0 })
    fill((i) => (i + 2) * 100)
    clock.time = 950
    expect(limiter.stats().maxPass).toBe(1000)
    expect(limiter.stats().maxInFlight).toBe(55)
  })

  it('drops by in-flight at or over the threshold, keeps dropping through the cooldown, then admits (49, reference 54)', () => {
    const { limiter, clock, signal, fill, hold } = referenceLimiter({ minInFlight: 0 })
    fill((i) => (i + 1) * 100)
    clock.time = 950
    expect(limiter.stats().maxInFlight).toBe(49)

    hold(45)
    signal.load = 800
    const admitted = limiter.tryAcquire()
    expect(admitted).toBeGreaterThanOrEqual(0) // 45 in flight <= 49
    limiter.release(admitted)

    hold(35) // 80 in flight
    expect(limiter.tryAcquire()).toBeLessThan(0) // load 800, 80 > 49
    signal.load = 700
    clock.time = 990 // same bucket, so the same estimate of 49
    expect(limiter.tryAcquire()).toBeLessThan(0) // below the threshold, but within the 1 s cooldown
    clock.time = 3500
    expect(limiter.tryAcquire()).toBeGreaterThanOrEqual(0) // 2 s later: the cooldown is over
  })

  it('ours: every drop at or over the threshold refreshes the cooldown', () => {
    const { limiter, clock, signal, hold } = referenceLimiter({ minInFlight: 5 })
    hold(10)
    signal.load = 900
    expect(limiter.tryAcquire()).toBeLessThan(0) // t = 0
    clock.time = 900
    expect(limiter.tryAcquire()).toBeLessThan(0) // t = 900 refreshes the drop time
    signal.load = 100
    clock.time = 1500 // 1.5 s after the first drop, 0.6 s after the last
    expect(limiter.tryAcquire()).toBeLessThan(0)
    clock.time = 1950
    expect(limiter.tryAcquire()).toBeGreaterThanOrEqual(0)
  })
})

describe('BbrLimiter: our fixes', () => {
  it('a fresh limiter admits up to the minInFlight floor at full load (the reference admits 2)', () => {
    const floored = referenceLimiter({ minInFlight: 20 })
    floored.signal.load = 1000
    let admitted = 0
    while (floored.limiter.tryAcquire() >= 0) admitted++
    expect(admitted).toBe(21) // admitted while 0..20 were in flight: 20 is not over the floor

    const reference = referenceLimiter({ minInFlight: 0 })
    reference.signal.load = 1000
    admitted = 0
    while (reference.limiter.tryAcquire() >= 0) admitted++
    expect(admitted).toBe(2) // inFlight > 1 is required to drop
  })

  it('measures sub-millisecond response times (0.2 ms stays 0.2, the reference says 1)', () => {
    const { limiter, clock, complete } = referenceLimiter()
    for (let n = 0; n < 50; n++) complete(10, 0.2)
    for (let n = 0; n < 50; n++) complete(110, 0.3)
    clock.time = 250
    expect(limiter.stats().minRt).toBeCloseTo(0.2, 9)
  })

  it('ignores a second release, a shed token and made-up tokens, and counts them', () => {
    const { limiter, signal, hold } = referenceLimiter({ minInFlight: 0 })
    const [a, b] = hold(2)
    limiter.release(a)
    limiter.release(a)
    signal.load = 1000
    hold(1)
    const shed = limiter.tryAcquire()
    expect(shed).toBeLessThan(0)
    limiter.release(shed)
    for (const bogus of [Number.NaN, 1.5, 2 ** 60, -0, b + 1, Infinity]) limiter.release(bogus)
    const stats = limiter.stats()
    expect(stats.inFlight).toBe(2) // b and the held one
    // a again, the shed token, and all six bogus numbers (-0 is token 0: a's slot, now of a later generation)
    expect(stats.invalidReleases).toBe(8)
    limiter.release(b)
    expect(limiter.stats().inFlight).toBe(1)
  })

  it('a token from a reused slot cannot release the new holder', () => {
    const { limiter } = referenceLimiter()
    const first = limiter.tryAcquire()
    limiter.release(first)
    const second = limiter.tryAcquire() // takes the same slot with the next generation
    limiter.release(first)
    expect(limiter.stats().inFlight).toBe(1)
    limiter.release(second)
    expect(limiter.stats().inFlight).toBe(0)
  })

  it('counts what it admitted and shed', () => {
    const { limiter, signal, hold } = referenceLimiter({ minInFlight: 2 })
    hold(5)
    signal.load = 950
    limiter.tryAcquire()
    limiter.tryAcquire()
    const s = limiter.stats()
    expect([s.admitted, s.shed, s.shedInFlight, s.load]).toEqual([5, 2, 2, 950])
  })
})

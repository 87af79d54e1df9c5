// Regression: release() with a BigInt or a Symbol threw a TypeError from the hot path, which promises never to throw.
import { describe, expect, it } from 'vitest'

import { BbrLimiter } from '../../lib/components/bbr/bbr-limiter'

describe('BbrLimiter.release with tokens that are not numbers', () => {
  it('ignores and counts them, and the in-flight count stays right', () => {
    const limiter = new BbrLimiter({ signal: () => 0, now: () => 0 })
    const token = limiter.tryAcquire()
    for (const bad of [BigInt(token), Symbol('t'), String(token), { valueOf: () => token }, null]) {
      expect(() => limiter.release(bad as unknown as number)).not.toThrow()
    }
    expect(limiter.inFlight).toBe(1)
    expect(limiter.stats().invalidReleases).toBe(5)
    limiter.release(token)
    expect(limiter.inFlight).toBe(0)
    limiter.close()
  })
})

describe('BbrLimiter.release with numbers near a live token', () => {
  it('ignores and counts them: a generation past the wrap (2^14), a negative or the last slot of all', () => {
    const limiter = new BbrLimiter({ signal: () => 0, now: () => 0 })
    const token = limiter.tryAcquire()
    const slots = 2 ** 16
    const bogus = [token + 2 ** 14 * slots, token - 2 ** 14 * slots, -token, token + 2 * slots, 2 ** 30, 2 ** 52 - 1]
    for (const bad of bogus) limiter.release(bad)
    expect(limiter.inFlight).toBe(1)
    expect(limiter.stats().invalidReleases).toBe(bogus.length)
    limiter.release(token)
    expect(limiter.inFlight).toBe(0)
    limiter.close()
  })
})

describe('BbrLimiter tokens over many reuses of one slot', () => {
  it('stay below 2^30 (never boxed by V8), and a stale token is refused until its generation comes round again', () => {
    const limiter = new BbrLimiter({ signal: () => 0, now: () => 0 })
    const first = limiter.tryAcquire()
    limiter.release(first)
    let largest = first
    let refusedBeforeWrap = 0
    let atWrap: number[] = [] // in flight after the stale release, in flight and refused after the live one
    // The table hands the freed slot straight back: 20 000 pairs run one slot through two wraps of its generations
    // (8 192 uses each). A stale token is refused at every reuse count but a multiple of 8 192.
    for (let pair = 1; pair <= 20_000; pair++) {
      const token = limiter.tryAcquire()
      largest = Math.max(largest, token)
      if (pair % 1000 === 0) limiter.release(first)
      if (pair === 8192) {
        limiter.release(first) // the wrapped generation matches: taken for the live token
        atWrap = [limiter.inFlight]
        refusedBeforeWrap = limiter.stats().invalidReleases
        limiter.release(token) // the live request's own release is then the refused one
        atWrap.push(limiter.inFlight, limiter.stats().invalidReleases - refusedBeforeWrap)
        continue
      }
      limiter.release(token)
    }
    expect(atWrap).toEqual([0, 0, 1])
    expect(largest).toBeLessThan(2 ** 30)
    expect(refusedBeforeWrap).toBe(8) // the releases of `first` at pairs 1000, ..., 8000
    expect(limiter.stats().invalidReleases).toBe(20 + 1)
    expect(limiter.inFlight).toBe(0)
    limiter.close()
  })
})

// Regression: release() with a BigInt or a Symbol threw a TypeError from the hot path, which promises never to throw.
import { describe, expect, it } from 'vitest'

import { BbrLimiter } from '../../lib/bbr/bbr-limiter'

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
  it('ignores and counts them: another generation (2^32 on, which wraps), a negative or the last slot of all', () => {
    const limiter = new BbrLimiter({ signal: () => 0, now: () => 0 })
    const token = limiter.tryAcquire()
    const slots = 2 ** 20
    const bogus = [token + 2 ** 32 * slots, token - 2 ** 32 * slots, -token, token + 2 * slots, 2 ** 52 - 1]
    for (const bad of bogus) limiter.release(bad)
    expect(limiter.inFlight).toBe(1)
    expect(limiter.stats().invalidReleases).toBe(bogus.length)
    limiter.release(token)
    expect(limiter.inFlight).toBe(0)
    limiter.close()
  })
})

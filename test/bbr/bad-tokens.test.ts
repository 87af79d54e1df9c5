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

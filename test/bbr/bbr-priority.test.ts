import { describe, expect, it } from 'vitest'

import { Priority } from '../../lib/index'
import { referenceLimiter } from './bbr-harness'

function saturated() {
  // No cooldown: each step below holds more requests right after a drop.
  const h = referenceLimiter({ minInFlight: 0, cooldown: 0 })
  h.fill((i) => (i + 1) * 100) // maxInFlight 49
  h.clock.time = 950
  return h
}

describe('BbrLimiter: priorities at saturation', () => {
  it('sheds low first, then normal, then high, and keeps headroom for critical', () => {
    const { limiter, signal, hold, clock } = saturated()
    expect(limiter.stats().maxInFlight).toBe(49)
    const at = (inFlight: number) => {
      clock.advance(1) // past the zero cooldown, still in the same bucket
      const held = hold(inFlight - limiter.inFlight)
      signal.load = 900
      const result = Object.fromEntries(
        (['low', 'normal', 'high', 'critical'] as const).map((name) => {
          const token = limiter.tryAcquire(name)
          if (token >= 0) limiter.release(token)
          return [name, token >= 0]
        }),
      )
      signal.load = 0
      return { result, held }
    }
    // Shares of 49: low 0.8 (39.2), normal 1 (49), high 1.1 (53.9), critical 1.2 (58.8).
    expect(at(40).result).toEqual({ low: false, normal: true, high: true, critical: true })
    expect(at(50).result).toEqual({ low: false, normal: false, high: true, critical: true })
    expect(at(55).result).toEqual({ low: false, normal: false, high: false, critical: true })
    expect(at(59).result).toEqual({ low: false, normal: false, high: false, critical: false })
  })

  it('accepts class numbers and names alike, and treats unknown values as normal', () => {
    const { limiter, signal, hold } = saturated()
    hold(50)
    signal.load = 900
    expect(limiter.tryAcquire(Priority.critical)).toBeGreaterThanOrEqual(0)
    expect(limiter.tryAcquire(Priority.normal)).toBeLessThan(0)
    expect(limiter.tryAcquire(17 as never)).toBeLessThan(0)
    expect(limiter.tryAcquire('vip' as never)).toBeLessThan(0)
    for (const inherited of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(limiter.tryAcquire(inherited as never)).toBeLessThan(0) // normal, not a prototype function
    }
    const s = limiter.stats()
    expect(s.byPriority.critical).toEqual({ admitted: 1, shedInFlight: 0, shedQueueDelay: 0, shedLatency: 0 })
    expect(s.byPriority.normal.shedInFlight).toBe(7)
  })

  it('takes custom shares', () => {
    const h = referenceLimiter({ minInFlight: 10, priorities: { critical: 3, low: 0.5 } })
    h.hold(25)
    h.signal.load = 900
    expect(h.limiter.tryAcquire('critical')).toBeGreaterThanOrEqual(0) // 25 <= 30
    expect(h.limiter.tryAcquire('normal')).toBeLessThan(0)
  })
})

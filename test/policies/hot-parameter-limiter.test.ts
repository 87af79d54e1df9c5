import { describe, expect, it } from 'vitest'

import { HotParameterLimiter, InvalidOptionError, listRegions, TokenBucket } from '../../lib/index'
import { InboundGuard } from '../../lib/guards/inbound/inbound-guard'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'

describe('HotParameterLimiter: a limit per hot value, memory for the hot values only', () => {
  it('limits a hot value among a million distinct ones, keeping at most 2k limiters', () => {
    const clock = new ManualClock()
    const limiter = new HotParameterLimiter({
      k: 16,
      hot: () => new TokenBucket({ rate: 1, burst: 100, now: clock.now }),
      now: clock.now,
    })
    let hotAdmitted = 0
    let coldRefused = 0
    let mostLimited = 0 // the most values limited at once, seen every 1000 calls
    for (let i = 0; i < 1_000_000; i++) {
      if (i % 10 === 0) {
        if (limiter.tryAcquire('item-hot')) hotAdmitted++
      } else if (!limiter.tryAcquire(`item-${i}`)) coldRefused++
      if (i % 1000 === 0) mostLimited = Math.max(mostLimited, limiter.stats().limited)
    }
    expect(mostLimited).toBeGreaterThan(0)
    expect(mostLimited).toBeLessThanOrEqual(32)
    expect(hotAdmitted).toBe(100) // its bucket's burst: the clock does not move
    expect(coldRefused).toBe(0) // the other values pass
    expect(limiter.stats()).toMatchObject({ refusedHot: 100_000 - 100, refusedOthers: 0, invalidArguments: 0 })
    expect(limiter.stats().limited).toBeLessThanOrEqual(32)
    expect(limiter.hotValues()[0].value).toBe('item-hot')
    expect(limiter.retryAfterMs('item-hot')).toBeCloseTo(1000, 6)
    limiter.close()
  })

  it('keeps its hot values in a keyed table: a token bucket each, memory made once, host-wide when shared', () => {
    const clock = new ManualClock()
    const limiter = new HotParameterLimiter({ k: 16, hot: { rate: 1, burst: 100 }, now: clock.now })
    let hotAdmitted = 0
    let coldRefused = 0
    for (let i = 0; i < 1_000_000; i++) {
      if (i % 10 === 0) hotAdmitted += Number(limiter.tryAcquire('item-hot'))
      else if (!limiter.tryAcquire(`item-${i}`)) coldRefused++
    }
    expect(hotAdmitted).toBe(100)
    expect(coldRefused).toBe(0)
    expect(limiter.stats().limited).toBeLessThanOrEqual(32) // 2k slots, made at construction
    expect(limiter.retryAfterMs('item-hot')).toBeCloseTo(1000, 3)
    limiter.close()
    const shared = uniqueName('hot-table')
    const a = new HotParameterLimiter({ k: 4, hot: { rate: 0.001, burst: 3 }, shared, now: clock.now })
    const b = new HotParameterLimiter({ k: 4, hot: { rate: 0.001, burst: 3 }, shared, now: clock.now })
    expect(listRegions()).toEqual(expect.arrayContaining([expect.stringMatching(`^keyed-limiter\\..*${shared}$`)]))
    let admitted = 0
    for (let i = 0; i < 10; i++) admitted += Number(a.tryAcquire('item-9')) + Number(b.tryAcquire('item-9'))
    expect(admitted).toBe(3) // one budget for the host
    a.close()
    b.close()
    expect(() => new HotParameterLimiter({ hot: { rate: 0 } })).toThrow(/`rate`/)
  })

  it('never refuses a value outright for turning hot while the others refill', () => {
    const clock = new ManualClock()
    for (const hot of [{ rate: 0.001, burst: 2 }, () => new TokenBucket({ rate: 0.001, burst: 2, now: clock.now })]) {
      const limiter = new HotParameterLimiter({ k: 2, hot, now: clock.now })
      // Two values turn hot and spend their bursts; a third value turns hot while they refill.
      for (let i = 0; i < 10; i++) limiter.tryAcquire('a')
      for (let i = 0; i < 10; i++) limiter.tryAcquire('b')
      expect(limiter.tryAcquire('c')).toBe(true)
      expect(limiter.tryAcquire('c')).toBe(true)
      expect(limiter.tryAcquire('a')).toBe(false) // still limited: no fresh budget
      limiter.close()
    }
  })

  it('gives the values that are not hot one shared limit when asked, and refuses a non-string value', () => {
    const clock = new ManualClock()
    const others = new TokenBucket({ rate: 1, burst: 5, now: clock.now })
    const limiter = new HotParameterLimiter({ k: 1, hot: () => new TokenBucket({ rate: 1e6 }), others, now: clock.now })
    for (let i = 0; i < 100; i++) limiter.tryAcquire('heavy')
    const cold = Array.from({ length: 8 }, (_, i) => limiter.tryAcquire(`cold-${i}`))
    expect(cold.filter(Boolean)).toHaveLength(5)
    expect(limiter.tryAcquire(42 as never)).toBe(false)
    expect(limiter.stats()).toMatchObject({ refusedOthers: 3, invalidArguments: 1 })
    limiter.close()
    expect(() => new HotParameterLimiter({} as never)).toThrow(/`hot`/)
    expect(() => new HotParameterLimiter({ hot: () => others, k: 0 })).toThrow(InvalidOptionError)
    expect(() => new HotParameterLimiter({ hot: () => others, others: {} as never })).toThrow(/`others`/)
  })

  it('serves as an inbound guard rate limit: a hot value is answered 429 (Shed.rateLimit)', () => {
    type Req = { url: string }
    const access = { header: () => undefined } as unknown as ConstructorParameters<typeof InboundGuard<Req>>[1]
    const clock = new ManualClock()
    const hot = new HotParameterLimiter({ k: 4, hot: () => new TokenBucket({ rate: 1, burst: 2, now: clock.now }) })
    const guard = new InboundGuard<Req>(
      { limiter: false, rateLimit: { limiter: hot, key: (req) => req.url.slice('/items/'.length) } },
      access,
    )
    const answers = Array.from({ length: 4 }, () => guard.tryAcquire({ url: '/items/42' }))
    expect(answers).toEqual([0, 0, -3, -3])
    expect(guard.tryAcquire({ url: '/items/7' })).toBe(0)
    guard.close()
    hot.close()
  })

  it('shares its hot values with the limiters of the same name and namespace only (SharingOptions)', () => {
    const shared = uniqueName('hot-param')
    const hot = () => new TokenBucket({ rate: 1 })
    const a = new HotParameterLimiter({ k: 4, hot, shared, namespace: 'tenant-a' })
    const sameApp = new HotParameterLimiter({ k: 4, hot, shared, namespace: 'tenant-a' })
    const otherApp = new HotParameterLimiter({ k: 4, hot, shared, namespace: 'tenant-b' })
    expect(listRegions()).toEqual(
      expect.arrayContaining([`heavykeeper.tenant-a.${shared}`, `heavykeeper.tenant-b.${shared}`]),
    )
    for (let i = 0; i < 50; i++) a.tryAcquire('item-7')
    expect(sameApp.hotValues().map((h) => h.value)).toContain('item-7')
    expect(otherApp.hotValues()).toEqual([])
    for (const l of [a, sameApp, otherApp]) l.close()
    expect(() => new HotParameterLimiter({ hot, shared, namespace: '../x' })).toThrow(/`namespace`/)
  })
})

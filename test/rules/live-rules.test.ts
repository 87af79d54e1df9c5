import { describe, expect, it } from 'vitest'

import {
  BbrLimiter,
  CircuitBreaker,
  InvalidOptionError,
  KeyConcurrencyLimiter,
  Shed,
  SlidingWindowLimiter,
  SreBreaker,
  TokenBucket,
} from '../../lib/index'
import { parseAssignments } from '../../lib/ops/cli/set-command'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'

describe('TokenBucket.configure', () => {
  it('changes the rate and burst at once, keeping the tokens available now (up to the new burst)', () => {
    const clock = new ManualClock()
    const bucket = new TokenBucket({ rate: 10, burst: 10, now: clock.now })
    for (let i = 0; i < 4; i++) expect(bucket.tryAcquire()).toBe(true)
    expect(bucket.available()).toBeCloseTo(6, 9)
    const rule = bucket.configure({ rate: 1000, burst: 100 })
    expect(rule).toEqual({ version: 1, values: { rate: 1000, burst: 100 } })
    expect(bucket.available()).toBeCloseTo(6, 9)
    clock.advance(10) // 10 tokens at the new rate
    expect(bucket.available()).toBeCloseTo(16, 9)
    expect(bucket.stats()).toMatchObject({ rate: 1000, burst: 100, rules: { version: 1 } })
    bucket.configure({ burst: 5 }) // the rate stays; what is available is cut to the new burst
    expect(bucket.stats()).toMatchObject({ rate: 1000, burst: 5, available: 5, rules: { version: 2 } })
  })

  it('refuses a bad rule whole, naming the field, and keeps the old one', () => {
    const bucket = new TokenBucket({ rate: 10 })
    expect(() => bucket.configure({ rate: 0 })).toThrow(InvalidOptionError)
    expect(() => bucket.configure({ rate: 0 })).toThrow(/`rate`/)
    expect(() => bucket.configure({ rate: 20, burst: -1 })).toThrow(/`burst`/)
    expect(() => bucket.configure({ shared: 'x' } as object)).toThrow(/`shared` must be a field that changes/)
    expect(() => bucket.configure({ rate: '20' } as unknown as { rate: number })).toThrow(/`rate` must be a number/)
    expect(bucket.stats()).toMatchObject({ rate: 10, burst: 10, rules: { version: 0 } })
  })

  it('reaches another member of the same shared bucket at its next call', () => {
    const clock = new ManualClock()
    const options = { rate: 1, burst: 1, shared: uniqueName('rules-tb'), now: clock.now }
    const a = new TokenBucket(options)
    const b = new TokenBucket(options)
    try {
      expect(b.tryAcquire()).toBe(true)
      expect(b.tryAcquire()).toBe(false)
      const told: unknown[] = []
      b.onRuleChange((rule) => told.push(rule))
      a.configure({ rate: 1e6, burst: 1000 })
      clock.advance(1) // 1000 tokens at the new rate
      expect(b.tryAcquire()).toBe(true)
      expect(told).toEqual([{ version: 1, values: { rate: 1e6, burst: 1000 } }])
      expect(b.tryAcquire(500)).toBe(true)
      expect(b.stats()).toMatchObject({ rate: 1e6, burst: 1000, rules: { version: 1 } })
      // A member attaching later obeys the rule in force, not its constructor's.
      const c = new TokenBucket(options)
      expect(c.stats()).toMatchObject({ rate: 1e6, burst: 1000 })
      c.close()
    } finally {
      a.close()
      b.close()
    }
  })
})

describe('getters and a rule another member set', () => {
  it('report the newest rule without applying it: onRuleChange is told at the next call, not at a read', () => {
    const clock = new ManualClock()
    const shared = uniqueName('rules-getters')
    const pairs = [
      [new TokenBucket({ rate: 1, shared, now: clock.now }), new TokenBucket({ rate: 1, shared, now: clock.now })],
      [
        new SlidingWindowLimiter({ limit: 2, window: 1000, shared, now: clock.now }),
        new SlidingWindowLimiter({ limit: 2, window: 1000, shared, now: clock.now }),
      ],
      [new KeyConcurrencyLimiter({ max: 1, shared }), new KeyConcurrencyLimiter({ max: 1, shared })],
      [
        new SreBreaker({ minimumCalls: 10, shared, now: clock.now, random: () => 0 }),
        new SreBreaker({ minimumCalls: 10, shared, now: clock.now, random: () => 0 }),
      ],
    ] as const
    const [buckets, windows, perKey, breakers] = pairs
    const told: string[] = []
    buckets[1].onRuleChange(() => told.push('bucket'))
    windows[1].onRuleChange(() => told.push('window'))
    perKey[1].onRuleChange(() => told.push('perKey'))
    breakers[1].onRuleChange(() => told.push('breaker'))
    for (let i = 0; i < 5; i++) breakers[0].recordFailure() // 5 calls, no accept: under minimumCalls 10
    expect(breakers[1].state).toBe('closed')

    buckets[0].configure({ rate: 50, burst: 7 })
    windows[0].configure({ limit: 9 })
    perKey[0].configure({ max: 3 })
    breakers[0].configure({ minimumCalls: 5 })
    for (let read = 0; read < 2; read++) {
      expect([buckets[1].rate, buckets[1].burst, windows[1].limit, perKey[1].max]).toEqual([50, 7, 9, 3])
      expect(breakers[1].state).toBe('open') // 5 calls are enough now
    }
    expect(told).toEqual([]) // nothing applied by reading
    buckets[1].tryAcquire()
    windows[1].tryAcquire()
    perKey[1].tryAcquire('k')
    breakers[1].tryAcquire()
    expect(told).toEqual(['bucket', 'window', 'perKey', 'breaker'])
    for (const [a, b] of pairs) {
      a.close()
      b.close()
    }
  })
})

describe('BbrLimiter.configure', () => {
  const clock = new ManualClock()
  function loaded(load: number) {
    const options = { now: clock.now, signal: () => load, minInFlight: 2, cooldown: 0, queueDelay: false } as const
    return new BbrLimiter(options)
  }

  it('moves the load threshold of the in-flight rule', () => {
    const limiter = loaded(900)
    const held = [limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]
    expect(held.every((t) => t >= 0)).toBe(true)
    expect(limiter.tryAcquire()).toBe(Shed.inFlight) // load 900 >= threshold 800, 3 in flight over 2
    expect(limiter.configure({ cpuThreshold: 950 }).version).toBe(1)
    clock.advance(1) // past the cooldown (0) after the last drop
    expect(limiter.tryAcquire()).toBeGreaterThanOrEqual(0)
    limiter.configure({ cpuThreshold: 900, minInFlight: 10 })
    expect(limiter.tryAcquire()).toBeGreaterThanOrEqual(0) // over the threshold again, but the floor is 10 now
    expect(limiter.stats().rules.values).toEqual({
      cpuThreshold: 900,
      cooldown: 0,
      minInFlight: 10,
      'queueDelay.target': 10,
      'queueDelay.interval': 100,
    })
  })

  it('execute obeys a rule another member set, as tryAcquire does', async () => {
    const options = { now: clock.now, signal: () => 900, minInFlight: 2, cooldown: 0, queueDelay: false } as const
    const shared = uniqueName('bbr-execute-rule')
    const limiter = new BbrLimiter({ ...options, shared })
    const other = new BbrLimiter({ ...options, shared })
    const held = [limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]
    expect(held.every((t) => t >= 0)).toBe(true)
    await expect(limiter.execute(() => 1)).rejects.toMatchObject({ reason: 'in-flight' })
    other.configure({ cpuThreshold: 950 })
    clock.advance(1) // past the cooldown (0) after the last drop
    await expect(limiter.execute(() => 1)).resolves.toBe(1)
    for (const token of held) limiter.release(token)
    limiter.close()
    other.close()
  })

  it('takes nested fields as the options nest them, and refuses a bad one whole', () => {
    const limiter = loaded(0)
    limiter.configure({ queueDelay: { target: 5 } })
    expect(limiter.stats().rules.values['queueDelay.target']).toBe(5)
    expect(() => limiter.configure({ cpuThreshold: 700, queueDelay: { target: 0 } })).toThrow(/`queueDelay.target`/)
    expect(() => limiter.configure({ cpuThreshold: 1001 })).toThrow(/`cpuThreshold`/)
    expect(() => limiter.configure({ window: 5 } as object)).toThrow(/`window` must be a field that changes/)
    expect(limiter.stats().rules).toMatchObject({ version: 1, values: { cpuThreshold: 800 } })
  })
})

describe('bulwark set arguments', () => {
  it('nests dotted fields and refuses what is not field=number', () => {
    expect(parseAssignments(['rate=5', 'queueDelay.target=2.5'])).toEqual({ rate: 5, queueDelay: { target: 2.5 } })
    expect(() => parseAssignments([])).toThrow(/field=value/)
    expect(() => parseAssignments(['rate'])).toThrow(/field=value/)
    expect(() => parseAssignments(['rate=fast'])).toThrow(/`rate` must be a number/)
    expect(() => parseAssignments(['rate='])).toThrow(/a number/)
  })
})

describe('SlidingWindowLimiter.configure', () => {
  it('changes the limit for every member; permits taken stay taken; a bad limit is refused', () => {
    const clock = new ManualClock()
    const options = { limit: 3, window: 1000, shared: uniqueName('rules-sw'), now: clock.now }
    const a = new SlidingWindowLimiter(options)
    const b = new SlidingWindowLimiter(options)
    try {
      expect([a.tryAcquire(), a.tryAcquire(), a.tryAcquire(), a.tryAcquire()]).toEqual([true, true, true, false])
      expect(b.configure({ limit: 5 })).toEqual({ version: 1, values: { limit: 5 } })
      expect([a.tryAcquire(), a.tryAcquire(), a.tryAcquire()]).toEqual([true, true, false])
      expect(() => a.configure({ limit: -1 })).toThrow(/`limit`/)
      expect(a.stats()).toMatchObject({ limit: 5, available: 0, rules: { version: 1 } })
    } finally {
      a.close()
      b.close()
    }
  })
})

describe('SreBreaker.configure', () => {
  it('changes success and minimumCalls for every member; the window keeps its counts; a bad value is refused', () => {
    const clock = new ManualClock()
    const options = { shared: uniqueName('rules-sre'), minimumCalls: 10, random: () => 0, now: clock.now }
    const a = new SreBreaker(options)
    const b = new SreBreaker(options)
    try {
      for (let i = 0; i < 20; i++) a.recordFailure()
      expect(a.tryAcquire()).toBe(false)
      expect(b.configure({ minimumCalls: 1000 })).toEqual({ version: 1, values: { success: 0.6, minimumCalls: 1000 } })
      expect(a.tryAcquire()).toBe(true) // 21 calls < 1000: the breaker lets calls through
      expect(() => a.configure({ success: 0 })).toThrow(/`success`/)
      expect(() => a.configure({ window: 5 } as never)).toThrow(/`window`/) // not a field that changes at run time
      expect(a.stats()).toMatchObject({ state: 'closed', rules: { version: 1, values: { minimumCalls: 1000 } } })
      b.configure({ minimumCalls: 10, success: 1 })
      expect(a.tryAcquire()).toBe(false)
    } finally {
      a.close()
      b.close()
    }
  })
})

describe('CircuitBreaker.configure', () => {
  it("changes its strategy's thresholds, minimumCalls and openDuration for every member; refuses another strategy's field", () => {
    const clock = new ManualClock()
    const shared = uniqueName('rules-circuit')
    const options = { shared, strategy: 'errorCount' as const, failureCount: 5, minimumCalls: 1, now: clock.now }
    const a = new CircuitBreaker(options)
    const b = new CircuitBreaker(options)
    try {
      expect(b.configure({ failureCount: 2, openDuration: 100 })).toEqual({
        version: 1,
        values: { failureCount: 2, minimumCalls: 1, openDuration: 100 },
      })
      a.recordFailure()
      a.recordFailure() // 2 failures: the new count trips it
      expect(b.state).toBe('open')
      clock.advance(101) // the new openDuration: a probe goes through
      expect(b.tryAcquire()).toBe(true)
      expect(() => a.configure({ failureRatio: 0.5 })).toThrow(/`failureRatio`/)
      expect(() => a.configure({ failureCount: 0 })).toThrow(/`failureCount`/)
      expect(a.stats().rules).toEqual({ version: 1, values: { failureCount: 2, minimumCalls: 1, openDuration: 100 } })
    } finally {
      a.close()
      b.close()
    }
  })

  it('a shorter openDuration set while a member waits out the old one lets its next call probe', () => {
    const clock = new ManualClock()
    const shared = uniqueName('rules-circuit-open')
    const options = { shared, strategy: 'errorCount' as const, failureCount: 1, minimumCalls: 1, now: clock.now }
    const a = new CircuitBreaker({ ...options, openDuration: 60_000 })
    const b = new CircuitBreaker({ ...options, openDuration: 60_000 })
    try {
      a.recordFailure()
      expect(a.tryAcquire()).toBe(false) // open: a waits until 60 s after the trip
      clock.advance(1000)
      b.configure({ openDuration: 500 })
      expect(a.tryAcquire()).toBe(true) // 1 s > 500 ms: a probe
    } finally {
      a.close()
      b.close()
    }
  })

  it('slowCallRatio: slowCallDuration changes what counts as slow', () => {
    const breaker = new CircuitBreaker({ strategy: 'slowCallRatio', slowCallDuration: 1000, minimumCalls: 2 })
    breaker.recordSuccess(500)
    breaker.configure({ slowCallDuration: 100 })
    breaker.recordSuccess(500)
    expect(breaker.stats()).toMatchObject({ calls: 2, badCalls: 1 })
    breaker.close()
  })
})

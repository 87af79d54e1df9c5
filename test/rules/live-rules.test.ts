import { describe, expect, it } from 'vitest'

import { BbrLimiter, InvalidOptionError, Shed, TokenBucket } from '../../lib/index'
import { parseAssignments } from '../../lib/rules/set-command'
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

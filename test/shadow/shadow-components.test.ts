// Shadow mode in every component with live rules (docs/rules/shadow.md): decide as usual, count what would have
// been refused apart from the real refusals, admit it; switched live by configure(), for every member of a host.
import { describe, expect, it } from 'vitest'

import {
  BbrLimiter,
  CircuitBreaker,
  InvalidOptionError,
  KeyConcurrencyLimiter,
  KeyedLimiter,
  Shed,
  SlidingWindowLimiter,
  SreBreaker,
  TokenBucket,
} from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'

const wouldRefuse = (stats: { rules?: { shadow?: { wouldRefuse: Array<{ reason: string; count: number }> } } }) =>
  Object.fromEntries((stats.rules?.shadow?.wouldRefuse ?? []).map((c) => [c.reason, c.count]))

describe('shadow mode: rate limiters', () => {
  it('TokenBucket: another member admits what it would refuse, counted apart; off again, it refuses', () => {
    const clock = new ManualClock()
    const options = { rate: 1, burst: 2, shared: uniqueName('shadow-tb'), now: clock.now }
    const a = new TokenBucket(options)
    const b = new TokenBucket(options)
    try {
      expect(b.stats().rules.shadow).toBeUndefined() // never on: nothing to report
      expect([b.tryAcquire(), b.tryAcquire(), b.tryAcquire()]).toEqual([true, true, false])
      expect(a.configure({ shadow: true })).toMatchObject({ version: 1, shadow: { enabled: true } })
      expect([b.tryAcquire(), b.tryAcquire(), b.tryAcquire(5)]).toEqual([true, true, true])
      expect(b.available()).toBe(0) // nothing was taken for the admitted refusals
      expect(b.stats().rules.shadow).toEqual({ enabled: true, wouldRefuse: [{ reason: 'rate', count: 3 }] })
      a.configure({ rate: 2 }) // a change that does not name the flag keeps it
      expect(b.tryAcquire()).toBe(true)
      a.configure({ shadow: false })
      expect(b.tryAcquire()).toBe(false)
      expect(a.stats().rules.shadow).toEqual({ enabled: false, wouldRefuse: [{ reason: 'rate', count: 4 }] })
    } finally {
      a.close()
      b.close()
    }
  })

  it('SlidingWindowLimiter and KeyedLimiter count the rate refusals they admit', () => {
    const clock = new ManualClock()
    const window = new SlidingWindowLimiter({ limit: 1, window: 1000, now: clock.now })
    const keyed = new KeyedLimiter({ rate: 1, burst: 1, now: clock.now })
    try {
      window.configure({ shadow: true })
      keyed.configure({ shadow: true })
      expect([window.tryAcquire(), window.tryAcquire(), window.tryAcquire()]).toEqual([true, true, true])
      expect(window.available()).toBe(0)
      expect(wouldRefuse(window.stats())).toEqual({ rate: 2 })
      expect([keyed.tryAcquire('k'), keyed.tryAcquire('k'), keyed.tryAcquire('j')]).toEqual([true, true, true])
      expect(wouldRefuse(keyed.stats().table!)).toEqual({ rate: 1 })
      keyed.configure({ shadow: false })
      expect(keyed.tryAcquire('k')).toBe(false)
    } finally {
      window.close()
      keyed.close()
    }
  })

  it('acquire() does not wait in shadow mode: the would-be refusal is counted and admitted at once', async () => {
    const clock = new ManualClock()
    const bucket = new TokenBucket({ rate: 1, burst: 1, now: clock.now })
    try {
      expect(bucket.tryAcquire()).toBe(true)
      await expect(bucket.acquire(1, { maxWait: 0 })).rejects.toMatchObject({ name: 'OverloadError' })
      bucket.configure({ shadow: true })
      await expect(bucket.acquire(1, { maxWait: 0 })).resolves.toBeUndefined()
      expect(wouldRefuse(bucket.stats())).toEqual({ rate: 1 })
    } finally {
      bucket.close()
    }
  })

  it('refuses a bad flag, naming the field, and changes nothing', () => {
    const bucket = new TokenBucket({ rate: 10 })
    expect(() => bucket.configure({ shadow: 'yes' } as never)).toThrow(InvalidOptionError)
    expect(() => bucket.configure({ rate: 20, shadow: 2 } as never)).toThrow(/`shadow` must be true or false/)
    expect(bucket.stats().rules).toEqual({ version: 0, values: { rate: 10, burst: 10 } })
  })
})

describe('shadow mode: concurrency and load', () => {
  it('KeyConcurrencyLimiter admits a key at its max holding no slot; the release gives back only real slots', () => {
    const limiter = new KeyConcurrencyLimiter({ max: 1, shared: uniqueName('shadow-kc') })
    try {
      const first = limiter.tryAcquire('k')
      expect(limiter.tryAcquire('k')).toBe(Shed.keyConcurrency)
      limiter.configure({ shadow: true })
      const second = limiter.tryAcquire('k')
      expect(second).toBeGreaterThanOrEqual(0)
      expect(limiter.inFlight('k')).toBe(1) // the shadowed request holds no slot
      limiter.release(second)
      limiter.release(first)
      expect(limiter.inFlight('k')).toBe(0)
      expect(limiter.stats()).toMatchObject({ invalidReleases: 0, shed: 1 })
      expect(wouldRefuse(limiter.stats())).toEqual({ 'key-concurrency': 1 })
    } finally {
      limiter.close()
    }
  })

  it('BbrLimiter admits what it would shed, counted by reason and class, not as a shed', async () => {
    const clock = new ManualClock()
    const options = { now: clock.now, signal: () => 900, minInFlight: 2, cooldown: 0, queueDelay: false } as const
    const limiter = new BbrLimiter(options)
    try {
      const held = [limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]
      expect(limiter.tryAcquire()).toBe(Shed.inFlight)
      limiter.configure({ shadow: true })
      const admitted = limiter.tryAcquire('low')
      expect(admitted).toBeGreaterThanOrEqual(0)
      await expect(limiter.execute(() => 'ran')).resolves.toBe('ran')
      const s = limiter.stats()
      expect(s.shedInFlight).toBe(1) // the real shed before the switch, only
      const counts = s.rules.shadow!.wouldRefuse.filter((c) => c.count > 0)
      expect(counts).toEqual([
        { reason: 'in-flight', priority: 'normal', count: 1 },
        { reason: 'in-flight', priority: 'low', count: 1 },
      ])
      for (const token of [...held, admitted]) limiter.release(token)
      limiter.configure({ shadow: false })
      const again = [limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]
      expect(limiter.tryAcquire()).toBe(Shed.inFlight)
      for (const token of again) limiter.release(token)
    } finally {
      limiter.close()
    }
  })
})

describe('shadow mode: breakers', () => {
  it('SreBreaker lets through what it would drop; the calls are counted as usual', () => {
    const clock = new ManualClock()
    const breaker = new SreBreaker({ minimumCalls: 10, now: clock.now, random: () => 0, countRejections: true })
    try {
      for (let i = 0; i < 20; i++) breaker.recordFailure()
      expect(breaker.tryAcquire()).toBe(false)
      const calls = breaker.stats().calls // 21: the rejection counted
      breaker.configure({ shadow: true })
      expect(breaker.tryAcquire()).toBe(true)
      expect(breaker.stats().calls).toBe(calls) // a shadowed refusal is not a rejection
      breaker.recordFailure()
      expect(breaker.stats()).toMatchObject({ state: 'open', calls: calls + 1 })
      expect(wouldRefuse(breaker.stats())).toEqual({ open: 1, 'half-open': 0 })
    } finally {
      breaker.close()
    }
  })

  it('CircuitBreaker lets calls through while open; its state moves as it would (a probe after openDuration)', () => {
    const clock = new ManualClock()
    const shared = uniqueName('shadow-circuit')
    const options = { shared, strategy: 'errorCount' as const, failureCount: 1, minimumCalls: 1, openDuration: 100 }
    const a = new CircuitBreaker({ ...options, now: clock.now })
    const b = new CircuitBreaker({ ...options, now: clock.now })
    try {
      a.recordFailure()
      expect(a.tryAcquire()).toBe(false)
      b.configure({ shadow: true })
      expect([a.tryAcquire(), a.tryAcquire()]).toEqual([true, true])
      a.recordSuccess() // an outcome while open counts for nothing, as without shadow mode
      expect(a.state).toBe('open')
      clock.advance(100)
      expect(a.tryAcquire()).toBe(true) // the probe
      expect(a.tryAcquire()).toBe(true) // half-open with its probe out: would refuse
      a.recordSuccess()
      expect(a.state).toBe('closed')
      expect(wouldRefuse(b.stats())).toEqual({ open: 2, 'half-open': 1 })
    } finally {
      a.close()
      b.close()
    }
  })
})

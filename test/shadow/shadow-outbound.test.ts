// Live rules and shadow mode of AdaptiveBulkhead and RetryBudget, and a HotParameterLimiter in shadow mode through
// the limiters it is built on (docs/rules/live-rules.md, docs/rules/shadow.md).
import { describe, expect, it } from 'vitest'

import {
  AdaptiveBulkhead,
  HotParameterLimiter,
  InvalidOptionError,
  Priority,
  RetryBudget,
  Shed,
  TokenBucket,
} from '../../lib/index'
import { setRule } from '../../lib/ops/cli/set-command'
import { simulateUpstream, type UpstreamPhase } from '../adaptive/upstream-sim'
import { ManualClock } from '../helpers/manual-clock'
import { fieldOf } from '../helpers/typed-errors'
import { uniqueName } from '../helpers/unique-name'
import '../helpers/cleanup-regions'

// An upstream of 8 slots, 20 ms a call (400 calls/s), offered `load` times that.
const phase = (load: number, seconds: number): UpstreamPhase => ({
  rate: load * 400,
  seconds,
  concurrency: 8,
  serviceMs: 20,
  priority: () => Priority.normal,
})

/**
 * Two members of one shared bulkhead whose upstream is saturated: `b` sheds calls now (its limit is full; the clock
 * stands still from here, so nothing moves on its own), `other` is another member of the region.
 */
function saturated() {
  const clock = new ManualClock(1000)
  const shared = uniqueName('bulkhead-shadow')
  const b = new AdaptiveBulkhead({ now: clock.now, shared })
  const other = new AdaptiveBulkhead({ now: clock.now, shared })
  simulateUpstream(b, clock, [phase(3, 3)])
  const held: number[] = []
  for (let token = b.tryAcquire(); token >= 0 && held.length < 1000; token = b.tryAcquire()) held.push(token)
  return { clock, b, other, held, shared }
}

const latencyCounts = (b: AdaptiveBulkhead) =>
  Object.fromEntries((b.stats().rules.shadow?.wouldRefuse ?? []).map((c) => [c.priority, c.count]))

describe('AdaptiveBulkhead: live rule and shadow mode', () => {
  it('sheds when enforcing; in shadow mode admits, holding a token, counted by class; enforces again when off', async () => {
    const { b, other, held } = saturated()
    try {
      expect(b.stats().latency.shedding).toBe(true)
      const shedBefore = b.stats().shed
      expect([b.tryAcquire(), b.tryAcquire(Priority.low)]).toEqual([Shed.latency, Shed.latency])
      expect(b.stats().shed).toBe(shedBefore + 2)
      expect(b.stats().rules.shadow).toBeUndefined() // never on: nothing to report

      expect(other.configure({ shadow: true })).toMatchObject({ version: 1, shadow: { enabled: true } })
      const inFlight = b.inFlight
      const admitted = [b.tryAcquire(), b.tryAcquire(), b.tryAcquire(), b.tryAcquire('low')]
      for (const token of admitted) expect(token).toBeGreaterThanOrEqual(0)
      expect(b.inFlight).toBe(inFlight + 4) // admitted calls hold a token as any other
      await expect(b.execute(() => 'ran')).resolves.toBe('ran')
      expect(b.stats().shed).toBe(shedBefore + 2) // not counted as sheds
      expect(latencyCounts(b)).toEqual({ critical: 0, high: 0, normal: 4, low: 1 })
      for (const token of admitted) b.release(token)
      expect(b.stats().invalidReleases).toBe(0)

      other.configure({ latency: { buffer: 0.5 } }) // a change that does not name the flag keeps it
      expect(b.tryAcquire()).toBeGreaterThanOrEqual(0)
      other.configure({ shadow: false })
      expect(b.tryAcquire()).toBe(Shed.latency)
      expect(b.stats().rules).toMatchObject({ version: 3, shadow: { enabled: false } })
    } finally {
      for (const token of held) b.release(token)
      b.close()
      other.close()
    }
  })

  it("a new bound reaches the member that steps the check: the limit it learns stays within the rule's maxLimit", () => {
    const clock = new ManualClock(1000)
    const shared = uniqueName('bulkhead-rule')
    const b = new AdaptiveBulkhead({ now: clock.now, shared })
    const other = new AdaptiveBulkhead({ now: clock.now, shared })
    let before = 0
    try {
      // Saturated for 3 s, then the rule changes in the other member (which never calls), then 3 s more.
      simulateUpstream(b, clock, [phase(3, 3), phase(3, 3)], (index) => {
        if (index > 0) return
        before = b.stats().latency.limit
        expect(other.configure({ latency: { maxLimit: 4 } }).values).toMatchObject({ 'latency.maxLimit': 4 })
      })
      expect(before).toBeGreaterThan(4)
      expect(b.stats().latency.limit).toBeLessThanOrEqual(4)
      expect(b.stats().rules).toMatchObject({ version: 1, values: { 'latency.maxLimit': 4, 'latency.minLimit': 3 } })
    } finally {
      b.close()
      other.close()
    }
  })

  it('refuses a bad rule whole, naming the field, and changes nothing', () => {
    const b = new AdaptiveBulkhead({ latency: { minLimit: 5 } })
    try {
      expect(fieldOf(() => b.configure({ latency: { maxLimit: 2 } }))).toBe('latency.maxLimit') // under minLimit
      expect(fieldOf(() => b.configure({ latency: { buffer: -1 } }))).toBe('latency.buffer')
      expect(fieldOf(() => b.configure({ latency: { probeInterval: 0, buffer: 1 } }))).toBe('latency.probeInterval')
      expect(fieldOf(() => b.configure({ window: 1000 } as never))).toBe('window') // lays out the region
      expect(fieldOf(() => b.configure({ latency: { loopDelay: () => 0 } } as never))).toBe('latency.loopDelay')
      expect(() => b.configure({ shadow: 'yes' } as never)).toThrow(InvalidOptionError)
      expect(b.stats().rules).toEqual({
        version: 0,
        values: {
          'latency.buffer': 0.25,
          'latency.minLimit': 5,
          'latency.maxLimit': 100_000,
          'latency.probeInterval': 1000,
        },
      })
    } finally {
      b.close()
    }
  })
})

describe('RetryBudget: live rule and shadow mode', () => {
  it('grants and counts in shadow mode the retries past its budget, without spending them', () => {
    const clock = new ManualClock(1000)
    const shared = uniqueName('retry-shadow')
    const options = { ratio: 0.5, minPerSecond: 0, shared, now: clock.now }
    const a = new RetryBudget(options)
    const b = new RetryBudget(options)
    try {
      for (let i = 0; i < 4; i++) a.recordRequest()
      expect([a.tryAcquire(), a.tryAcquire(), a.tryAcquire()]).toEqual([true, true, false])
      b.configure({ shadow: true })
      expect([a.tryAcquire(), a.tryAcquire(), a.tryAcquire()]).toEqual([true, true, true])
      expect(a.stats()).toMatchObject({ requests: 4, retries: 2, available: 0 }) // the budget as enforcing left it
      expect(b.stats().rules.shadow).toEqual({ enabled: true, wouldRefuse: [{ reason: 'budget', count: 3 }] })
      b.configure({ shadow: false })
      expect(a.tryAcquire()).toBe(false)
      b.configure({ ratio: 1 }) // a new ratio reaches the other member at its next call
      expect([a.tryAcquire(), a.tryAcquire(), a.tryAcquire()]).toEqual([true, true, false])
      expect(a.stats()).toMatchObject({ retries: 4, rules: { version: 3, values: { ratio: 1, minPerSecond: 0 } } })
    } finally {
      a.close()
      b.close()
    }
  })

  it('refuses a bad rule, naming the field, and changes nothing', () => {
    const budget = new RetryBudget({ ratio: 0.2 })
    expect(fieldOf(() => budget.configure({ ratio: -1 }))).toBe('ratio')
    expect(fieldOf(() => budget.configure({ minPerSecond: Number.NaN, ratio: 1 }))).toBe('minPerSecond')
    expect(fieldOf(() => budget.configure({ window: 5 } as never))).toBe('window')
    expect(budget.stats().rules).toEqual({ version: 0, values: { ratio: 0.2, minPerSecond: 10 } })
    budget.close()
  })
})

describe('HotParameterLimiter: shadow mode through the limiters it is built on', () => {
  it('its shared table switched with `bulwark set keyed-limiter.<shared>`, and `others`: refuses nothing, counts', () => {
    const clock = new ManualClock(1000)
    const shared = uniqueName('hot-shadow')
    const others = new TokenBucket({ rate: 0.001, burst: 1, now: clock.now })
    const limiter = new HotParameterLimiter({ k: 4, hot: { rate: 0.001, burst: 1 }, others, shared, now: clock.now })
    try {
      // Four hot values (ten calls each: a value asked once is not hot beside them), each limited to its burst.
      const heavy = ['item-1', 'item-2', 'item-3', 'item-4']
      for (const value of heavy) for (let i = 0; i < 10; i++) limiter.tryAcquire(value)
      expect(limiter.stats()).toMatchObject({ refusedHot: 36, rules: { version: 0 } })
      expect([limiter.tryAcquire('cold-0'), limiter.tryAcquire('cold-1')]).toEqual([true, false]) // others: burst 1
      expect(limiter.stats().refusedOthers).toBe(1)

      setRule(`keyed-limiter.${shared}`, ['shadow=on']) // the table's region, as from a shell
      others.configure({ shadow: true })
      expect(heavy.map((value) => limiter.tryAcquire(value))).toEqual([true, true, true, true])
      const cold = Array.from({ length: 10 }, (_, i) => limiter.tryAcquire(`cold-${i + 2}`))
      expect(cold).toEqual(Array(10).fill(true))
      expect(limiter.stats()).toMatchObject({ refusedHot: 36, refusedOthers: 1 }) // nothing refused since
      expect(limiter.stats().rules?.shadow).toEqual({ enabled: true, wouldRefuse: [{ reason: 'rate', count: 4 }] })
      expect(others.stats().rules.shadow).toEqual({ enabled: true, wouldRefuse: [{ reason: 'rate', count: 10 }] })
    } finally {
      limiter.close()
      others.close()
    }
  })
})

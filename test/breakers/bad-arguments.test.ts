// Regressions found by the reliability fuzzing: hot-path outcome reports and event subscriptions with bad arguments.
import { describe, expect, it } from 'vitest'

import { CircuitBreaker } from '../../lib/components/breakers/circuit-breaker'
import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'

describe('CircuitBreaker with bad arguments', () => {
  it('recordSuccess / recordFailure never throw, whatever the duration (a Symbol used to throw a TypeError)', () => {
    const cb = new CircuitBreaker({
      strategy: 'slowCallRatio',
      slowCallDuration: 10,
      minimumCalls: 2,
      slowCallRatio: 0.5,
      now: () => 0,
    })
    for (const d of [Symbol('d'), 10n ** 30n, 'slow', undefined, Number.NaN]) {
      expect(() => cb.recordSuccess(d as unknown as number)).not.toThrow()
      expect(() => cb.recordFailure(d as unknown as number)).not.toThrow()
    }
    // Only a number over slowCallDuration is slow: none of those were.
    expect(cb.stats()).toMatchObject({ state: 'closed', badCalls: 0, calls: 10 })
    cb.close()
  })

  it('onStateChange with something that is not a function is an InvalidArgumentError naming the listener', () => {
    const cb = new CircuitBreaker({ now: () => 0 })
    expect(() => cb.onStateChange(42 as never)).toThrow(InvalidArgumentError)
    expect(() => cb.onStateChange(42 as never)).toThrow(/argument `listener` must be a function/)
    cb.close()
  })
})

describe('windows too small to divide into buckets', () => {
  it('are an InvalidOptionError naming `window` (a denormal window gave 0 ms buckets)', async () => {
    const { SreBreaker } = await import('../../lib/components/breakers/sre-breaker')
    const { RetryBudget } = await import('../../lib/components/resilience/retry-budget')
    const { fieldOf } = await import('../helpers/typed-errors')
    expect(fieldOf(() => new SreBreaker({ window: 5e-324, buckets: 10 }))).toBe('window')
    expect(fieldOf(() => new CircuitBreaker({ window: 5e-324, buckets: 3 }))).toBe('window')
    expect(fieldOf(() => new RetryBudget({ window: 5e-324, buckets: 2 }))).toBe('window')
    new SreBreaker({ window: 5e-324, buckets: 1 }).close() // one bucket of the whole (tiny) window is still a window
  })
})

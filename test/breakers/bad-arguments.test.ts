// Regressions found by the reliability fuzzing: hot-path outcome reports and event subscriptions with bad arguments.
import { describe, expect, it } from 'vitest'

import { CircuitBreaker } from '../../lib/breakers/circuit-breaker'
import { InvalidArgumentError } from '../../lib/errors/invalid-argument-error'

describe('CircuitBreaker with bad arguments', () => {
  it('onSuccess / onFailure never throw, whatever the duration (a Symbol used to throw a TypeError)', () => {
    const cb = new CircuitBreaker({ strategy: 'slowCallRatio', slowCallDuration: 10, minimumCalls: 2, threshold: 0.5, now: () => 0 })
    for (const d of [Symbol('d'), 10n ** 30n, 'slow', undefined, Number.NaN]) {
      expect(() => cb.onSuccess(d as unknown as number)).not.toThrow()
      expect(() => cb.onFailure(d as unknown as number)).not.toThrow()
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

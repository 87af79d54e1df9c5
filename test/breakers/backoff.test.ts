// Regression: fullJitterDelay returned NaN for a huge retry with a zero base (0 * Infinity) or a random source that
// strayed out of [0, 1), and took any argument without a check (found by the reliability fuzzing).
import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { fullJitterDelay } from '../../lib/components/resilience/backoff'

describe('fullJitterDelay', () => {
  it('stays in [0, ceiling) for a huge retry count and for a random source that returns garbage', () => {
    expect(fullJitterDelay(4_502_657_202_867_984, 0, 0, () => 0.5)).toBe(0)
    expect(fullJitterDelay(2000, 100, 5000, () => 0.5)).toBe(2500)
    expect(fullJitterDelay(1, 100, 5000, () => Number.NaN)).toBe(0)
    expect(fullJitterDelay(1, 100, 5000, () => 7)).toBe(0)
    expect(fullJitterDelay(1, 100, 5000, () => 0.25)).toBe(50)
  })

  it('refuses bad arguments with InvalidArgumentError', () => {
    expect(() => fullJitterDelay(-1, 1, 1, Math.random)).toThrow(InvalidArgumentError)
    expect(() => fullJitterDelay(0, Number.NaN, 1, Math.random)).toThrow(/argument `baseDelay`/)
    expect(() => fullJitterDelay(0, 1, Infinity, Math.random)).toThrow(/argument `maxDelay`/)
    expect(() => fullJitterDelay(0, 1, 1, 0.5 as unknown as () => number)).toThrow(/argument `random`/)
  })
})

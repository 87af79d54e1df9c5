import { describe, expect, it } from 'vitest'

import {
  BreakerGroup,
  CircuitBreaker,
  InvalidOptionError,
  RegionMismatchError,
  RetryBudget,
  SreBreaker,
} from '../../lib/index'
import { uniqueName } from '../helpers/unique-name'

function expectOptionError(make: () => unknown, field: string, message: RegExp) {
  let caught: unknown
  try {
    make()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(InvalidOptionError)
  expect((caught as InvalidOptionError).field).toBe(field)
  expect((caught as Error).message).toMatch(message)
}

describe('breaker option validation', () => {
  const sre: Array<[string, unknown, string, RegExp]> = [
    [
      'success 0 (the reference then allows everything)',
      { success: 0 },
      'success',
      /must be a finite number > 0 and <= 1, got 0 \(number\)/,
    ],
    ['success above 1', { success: 1.5 }, 'success', /got 1.5/],
    ['success NaN', { success: Number.NaN }, 'success', /got NaN/],
    ['negative minimumCalls', { minimumCalls: -1 }, 'minimumCalls', /must be an integer >= 0/],
    ['the 0.x request', { request: 10 }, 'request', /now called minimumCalls/],
    ['zero buckets', { buckets: 0 }, 'buckets', /must be an integer >= 1/],
    ['zero window', { window: 0 }, 'window', /must be a finite number > 0/],
    ['countRejections not boolean', { countRejections: 'yes' }, 'countRejections', /must be a boolean/],
    ['bad shared name', { shared: 'a/b' }, 'shared', /must be a name of 1-120 characters/],
    ['random not a function', { random: 0.5 }, 'random', /must be a function/],
    ['now not a function', { now: 5 }, 'now', /must be a function/],
  ]
  for (const [what, options, field, message] of sre) {
    it(`SreBreaker: ${what}`, () => expectOptionError(() => new SreBreaker(options as never), field, message))
  }

  const circuit: Array<[string, unknown, string, RegExp]> = [
    ['unknown strategy', { strategy: 'latency' }, 'strategy', /one of 'errorRatio', 'slowCallRatio', 'errorCount'/],
    ['failureRatio 0', { failureRatio: 0 }, 'failureRatio', /> 0 and <= 1, got 0/],
    ['slowCallRatio above 1', { strategy: 'slowCallRatio', slowCallRatio: 2 }, 'slowCallRatio', /got 2/],
    ['fractional failureCount', { strategy: 'errorCount', failureCount: 2.5 }, 'failureCount', /an integer >= 1/],
    ['the 0.x threshold', { threshold: 0.5 }, 'threshold', /now called failureRatio, slowCallRatio or failureCount/],
    ['failureCount with errorRatio', { failureCount: 5 }, 'failureCount', /absent unless strategy is 'errorCount'/],
    [
      'slowCallDuration with errorCount',
      { strategy: 'errorCount', slowCallDuration: 5 },
      'slowCallDuration',
      /absent unless strategy is 'slowCallRatio' \(it is 'errorCount'\)/,
    ],
    [
      'failureRatio with slowCallRatio',
      { strategy: 'slowCallRatio', failureRatio: 0.5 },
      'failureRatio',
      /'errorRatio'/,
    ],
    ['zero halfOpenCalls', { halfOpenCalls: 0 }, 'halfOpenCalls', /an integer >= 1 and <= 1000/],
    ['too many halfOpenCalls', { halfOpenCalls: 1001 }, 'halfOpenCalls', /got 1001/],
    ['negative openDuration', { openDuration: -1 }, 'openDuration', />= 0/],
    ['zero probeTimeout', { probeTimeout: 0 }, 'probeTimeout', /> 0/],
    ['zero minimumCalls', { minimumCalls: 0 }, 'minimumCalls', />= 1/],
    ['negative slowCallDuration', { strategy: 'slowCallRatio', slowCallDuration: -5 }, 'slowCallDuration', />= 0/],
    ['options not an object', 'fast', 'options', /an options object/],
  ]
  for (const [what, options, field, message] of circuit) {
    it(`CircuitBreaker: ${what}`, () => expectOptionError(() => new CircuitBreaker(options as never), field, message))
  }

  it('BreakerGroup and RetryBudget name the bad field', () => {
    const factory = () => new SreBreaker()
    expectOptionError(() => new BreakerGroup(factory, { maxKeys: 0 }), 'maxKeys', /an integer >= 1/)
    expectOptionError(() => new BreakerGroup(factory, { idleTimeout: 0 }), 'idleTimeout', /> 0/)
    expectOptionError(() => new BreakerGroup(factory, { shared: 'x'.repeat(65) }), 'shared', /at most 64 characters/)
    expectOptionError(() => new RetryBudget({ ratio: -0.1 }), 'ratio', />= 0/)
    expectOptionError(() => new RetryBudget({ minPerSecond: Number.POSITIVE_INFINITY }), 'minPerSecond', /finite/)
  })

  it('members of a shared breaker must agree on window, buckets and halfOpenCalls', () => {
    const shared = uniqueName('agree')
    const a = new CircuitBreaker({ shared, halfOpenCalls: 2 })
    expect(() => new CircuitBreaker({ shared, halfOpenCalls: 3 })).toThrow(RegionMismatchError)
    expect(() => new CircuitBreaker({ shared, halfOpenCalls: 2, window: 5000 })).toThrow(RegionMismatchError)
    const b = new CircuitBreaker({ shared, halfOpenCalls: 2, failureRatio: 0.9 })
    b.close()
    a.close()
  })
})

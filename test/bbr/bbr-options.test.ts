import { describe, expect, it } from 'vitest'

import { BbrLimiter, InvalidOptionError } from '../../lib/index'

describe('BbrLimiter: option validation', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['buckets: 0', { buckets: 0 }, /option `buckets` must be an integer >= 2 and <= 10000, got 0 \(number\)/],
    [
      'window not a multiple',
      { window: 1000, buckets: 7 },
      /option `window` must be a multiple of buckets \(7\), got 1000/,
    ],
    ['threshold 0', { cpuThreshold: 0 }, /option `cpuThreshold` must be a finite number >= 1 and <= 1000, got 0/],
    ['threshold 1001', { cpuThreshold: 1001 }, /cpuThreshold.*got 1001/],
    ['threshold NaN', { cpuThreshold: Number.NaN }, /cpuThreshold.*got NaN/],
    ['negative cooldown', { cooldown: -1 }, /option `cooldown`.*got -1/],
    ['fractional minInFlight', { minInFlight: 2.5 }, /option `minInFlight` must be an integer/],
    ['bad signal', { signal: 'gpu' }, /option `signal` must be 'max', 'cpu', 'elu'/],
    ['bad delay signal', { signal: { load: () => 0, delay: 5 } }, /option `signal.delay` must be a function/],
    ['bad target', { queueDelay: { target: 0 } }, /option `queueDelay.target` must be a finite number > 0/],
    ['bad priority', { priorities: { urgent: 2 } }, /option `priorities.urgent`/],
    ['bad share', { priorities: { low: -1 } }, /option `priorities.low`.*got -1/],
    ['bad shared name', { shared: '../etc' }, /option `shared` must be a name of 1-120 characters/],
    ['bad now', { now: 5 }, /option `now` must be a function, got 5/],
    ['bad sampling', { rtSampling: 3 }, /option `rtSampling` must be a power of two, got 3/],
    ['not an object', 'fast', /option `options` must be an options object/],
  ]
  for (const [title, options, message] of cases) {
    it(`rejects ${title}`, () => {
      let caught: unknown
      try {
        new BbrLimiter(options as never)
      } catch (error) {
        caught = error
      }
      expect(caught).toBeInstanceOf(InvalidOptionError)
      expect((caught as Error).message).toMatch(message)
    })
  }

  it('names the field and keeps the value on the error', () => {
    // A constructor that threw nothing would leave `caught` undefined and fail here.
    let caught: unknown
    try {
      new BbrLimiter({ buckets: 0 })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(InvalidOptionError)
    expect(caught).toMatchObject({ field: 'buckets', value: 0 })
  })

  it('accepts the documented defaults', () => {
    const limiter = new BbrLimiter()
    const token = limiter.tryAcquire()
    expect(token).toBeGreaterThanOrEqual(0)
    limiter.release(token)
    expect(limiter.stats()).toMatchObject({ inFlight: 0, admitted: 1, shed: 0, minRt: 1, maxInFlight: 20 })
  })
})

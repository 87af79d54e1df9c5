import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { SlidingWindowLimiter } from '../../lib/components/ratelimit/sliding-window-limiter'
import { ManualClock } from '../helpers/manual-clock'

function acquireAll(limiter: SlidingWindowLimiter, n = 1): number {
  let taken = 0
  while (taken < 100_000 && limiter.tryAcquire(n)) taken += n
  return taken
}

describe('SlidingWindowLimiter', () => {
  it('admits `limit` per window, sliding one bucket at a time', () => {
    const clock = new ManualClock(0)
    const limiter = new SlidingWindowLimiter({ limit: 10, window: 1000, buckets: 10, now: clock.now })
    clock.time = 0
    expect(acquireAll(limiter, 4)).toBe(8)
    expect(limiter.tryAcquire(2)).toBe(true) // 10 in bucket 0
    clock.time = 300
    expect(limiter.tryAcquire()).toBe(false)
    clock.time = 999
    expect(limiter.tryAcquire()).toBe(false)
    clock.time = 1000 // bucket 0 has slid out
    expect(acquireAll(limiter)).toBe(10)
  })

  it('frees each bucket exactly when it leaves the window', () => {
    const clock = new ManualClock(0)
    const limiter = new SlidingWindowLimiter({ limit: 10, window: 1000, buckets: 10, now: clock.now })
    clock.time = 50
    expect(acquireAll(limiter, 4)).toBe(8) // bucket 0 holds 8
    clock.time = 350
    expect(acquireAll(limiter)).toBe(2) // bucket 3 holds 2
    clock.time = 999
    expect(limiter.available()).toBe(0)
    expect(limiter.retryAfterMs()).toBe(1)
    expect(limiter.retryAfterMs(9)).toBe(301) // both buckets must leave: bucket 3 at 1300
    clock.time = 1000
    expect(limiter.available()).toBe(8)
    expect(acquireAll(limiter)).toBe(8)
    clock.time = 1299
    expect(limiter.tryAcquire()).toBe(false)
    clock.time = 1300
    expect(acquireAll(limiter)).toBe(2)
  })

  it('anchors bucket boundaries at its creation time', () => {
    const clock = new ManualClock(1234)
    const limiter = new SlidingWindowLimiter({ limit: 1, window: 100, buckets: 2, now: clock.now })
    expect(limiter.tryAcquire()).toBe(true)
    clock.time = 1333 // 99 ms after creation: still bucket 1 of the window that started at creation
    expect(limiter.tryAcquire()).toBe(false)
    clock.time = 1334
    expect(limiter.tryAcquire()).toBe(true)
  })

  it('after a gap longer than the window everything is free again, and never more than the limit', () => {
    const clock = new ManualClock(0)
    const limiter = new SlidingWindowLimiter({ limit: 5, window: 100, buckets: 4, now: clock.now })
    expect(acquireAll(limiter)).toBe(5)
    clock.time = 10_000
    expect(limiter.available()).toBe(5)
    expect(acquireAll(limiter)).toBe(5)
  })

  it('over any run, no window of `buckets` consecutive buckets holds more than the limit', () => {
    const clock = new ManualClock(0)
    const limiter = new SlidingWindowLimiter({ limit: 7, window: 60, buckets: 6, now: clock.now })
    const perBucket = new Map<number, number>()
    for (let t = 0; t < 3000; t += 3) {
      clock.time = t
      const n = acquireAll(limiter)
      perBucket.set(Math.floor(t / 10), (perBucket.get(Math.floor(t / 10)) ?? 0) + n)
    }
    let max = 0
    for (let b = 0; b < 300; b++) {
      let sum = 0
      for (let k = b - 5; k <= b; k++) sum += perBucket.get(k) ?? 0
      max = Math.max(max, sum)
    }
    expect(max).toBe(7)
  })

  it('retryAfterMs is Infinity for more than the limit; bad counts are refused and counted, never thrown', () => {
    const limiter = new SlidingWindowLimiter({ limit: 3, window: 1000, now: () => 0 })
    expect(limiter.tryAcquire(4)).toBe(false)
    expect(limiter.retryAfterMs(4)).toBe(Infinity)
    expect(limiter.tryAcquire(0)).toBe(false)
    expect(limiter.tryAcquire(NaN)).toBe(false)
    expect(limiter.stats()).toMatchObject({ limit: 3, available: 3, invalidArguments: 2 })
    expect(() => limiter.retryAfterMs(0)).toThrow(InvalidArgumentError)
  })

  it('validates its options', () => {
    expect(() => new SlidingWindowLimiter({ limit: 0, window: 1 })).toThrow(/option `limit`/)
    expect(() => new SlidingWindowLimiter({ limit: 1, window: -5 })).toThrow(/option `window`/)
    expect(() => new SlidingWindowLimiter({ limit: 1, window: 10, buckets: 2.5 })).toThrow(
      /option `buckets` must be an integer/,
    )
    expect(new SlidingWindowLimiter({ limit: 1, window: 10 }).buckets).toBe(10)
  })
})

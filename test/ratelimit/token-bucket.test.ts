import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../lib/foundation/errors/invalid-option-error'
import { TokenBucket } from '../../lib/components/ratelimit/token-bucket'
import { ManualClock } from '../helpers/manual-clock'

function takeAll(bucket: TokenBucket, tries = 10_000): number {
  let taken = 0
  while (taken < tries && bucket.tryAcquire()) taken++
  return taken
}

describe('TokenBucket', () => {
  it('starts full: a burst, then nothing until time passes', () => {
    const clock = new ManualClock(0)
    const bucket = new TokenBucket({ rate: 1000, burst: 100, now: clock.now })
    expect(takeAll(bucket)).toBe(100)
    expect(bucket.tryAcquire()).toBe(false)
    expect(bucket.available()).toBe(0)
  })

  it('refills at `rate` per second, lazily, and never above the burst', () => {
    const clock = new ManualClock(5_000)
    const bucket = new TokenBucket({ rate: 1000, burst: 100, now: clock.now })
    takeAll(bucket)
    clock.advance(10) // 10 ms at 1000/s
    expect(takeAll(bucket)).toBe(10)
    clock.advance(0.5)
    expect(bucket.tryAcquire()).toBe(false)
    expect(bucket.available()).toBeCloseTo(0.5, 9)
    clock.advance(0.5)
    expect(bucket.tryAcquire()).toBe(true)
    clock.advance(60_000) // an hour's worth of refill still only fills the bucket
    expect(bucket.available()).toBe(100)
    expect(takeAll(bucket)).toBe(100)
  })

  it('admits exactly burst + rate x time over a long run, in any mix of sizes', () => {
    const clock = new ManualClock(0)
    const bucket = new TokenBucket({ rate: 200, burst: 20, now: clock.now })
    let taken = 0
    for (let ms = 0; ms <= 10_000; ms += 7) {
      clock.time = ms
      for (const n of [3, 1, 2]) while (bucket.tryAcquire(n)) taken += n
    }
    // After the last round the bucket holds less than one token: 20 + 200 * 9.996 s, less what is left.
    expect(taken).toBe(20 + Math.floor(200 * 9.996 + 1e-9))
  })

  it('weighted takes: n at once, and more than the burst never fits', () => {
    const clock = new ManualClock(0)
    const bucket = new TokenBucket({ rate: 10, burst: 5, now: clock.now })
    expect(bucket.tryAcquire(6)).toBe(false)
    expect(bucket.tryAcquire(5)).toBe(true)
    expect(bucket.tryAcquire(1)).toBe(false)
    clock.advance(250)
    expect(bucket.tryAcquire(2.5)).toBe(true)
  })

  it('retryAfterMs says when n tokens will be there', () => {
    const clock = new ManualClock(0)
    const bucket = new TokenBucket({ rate: 100, burst: 10, now: clock.now })
    expect(bucket.retryAfterMs()).toBe(0)
    takeAll(bucket)
    expect(bucket.retryAfterMs()).toBe(10)
    expect(bucket.retryAfterMs(5)).toBe(50)
    expect(bucket.retryAfterMs(11)).toBe(Infinity)
    clock.advance(50)
    expect(bucket.tryAcquire(5)).toBe(true)
    expect(bucket.tryAcquire()).toBe(false)
  })

  it('defaults the burst to one second of rate, at least 1', () => {
    expect(new TokenBucket({ rate: 250 }).burst).toBe(250)
    expect(new TokenBucket({ rate: 0.1 }).burst).toBe(1)
  })

  it('a bad permit count is refused and counted by tryAcquire, an InvalidArgumentError elsewhere', () => {
    const bucket = new TokenBucket({ rate: 10 })
    for (const n of [0, -1, NaN, Infinity, '1' as unknown as number]) expect(bucket.tryAcquire(n)).toBe(false)
    expect(bucket.stats()).toMatchObject({ rate: 10, burst: 10, available: 10, invalidArguments: 5 })
    expect(bucket.tryAcquire(11)).toBe(false) // over the burst: refused, but a valid count
    expect(bucket.stats().invalidArguments).toBe(5)
    expect(() => bucket.retryAfterMs(-1)).toThrow(InvalidArgumentError)
  })

  it('a bad option is an InvalidOptionError naming it', () => {
    expect(() => new TokenBucket({ rate: 0 })).toThrow(/option `rate` must be a finite number > 0, got 0/)
    expect(() => new TokenBucket({ rate: 1, burst: -1 })).toThrow(InvalidOptionError)
    expect(() => new TokenBucket({ rate: 1, shared: 'a/b' })).toThrow(/option `shared`/)
    expect(() => new TokenBucket({ rate: 1, now: 5 as never })).toThrow(/option `now`/)
    expect(() => new TokenBucket(undefined as never)).toThrow(/option `rate`/)
  })
})

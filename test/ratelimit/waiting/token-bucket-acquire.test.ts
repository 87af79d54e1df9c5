import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { AbortedError } from '../../../lib/foundation/errors/aborted-error'
import { InvalidArgumentError } from '../../../lib/foundation/errors/invalid-argument-error'
import { OverloadError } from '../../../lib/foundation/errors/overload-error'
import { track } from '../../helpers/settle-order'
import { TokenBucket } from '../../../lib/components/ratelimit/token-bucket'

// Fake timers drive both the one timer of the queue and the clock the bucket reads (Date.now is faked with them).
const now = (): number => Date.now()

describe('TokenBucket.acquire: waiting for tokens with one timer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('resolves at once while tokens are there, then serves waiters FIFO as tokens come (rate 10/s)', async () => {
    const bucket = new TokenBucket({ rate: 10, burst: 2, now })
    const order: string[] = []
    track(order, 'a', bucket.acquire())
    track(order, 'b', bucket.acquire())
    for (const label of ['c', 'd', 'e']) track(order, label, bucket.acquire())
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual(['a', 'b'])
    await vi.advanceTimersByTimeAsync(100)
    expect(order).toEqual(['a', 'b', 'c'])
    await vi.advanceTimersByTimeAsync(200)
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e'])
    bucket.close()
  })

  it('keeps one timer however many wait, and none once nobody waits', async () => {
    const bucket = new TokenBucket({ rate: 1000, burst: 1, now })
    const waits = Array.from({ length: 1000 }, () => bucket.acquire(1, { maxWait: 5000 }))
    expect(vi.getTimerCount()).toBe(1)
    await vi.advanceTimersByTimeAsync(1000)
    await Promise.all(waits)
    expect(vi.getTimerCount()).toBe(0)
    expect(bucket.stats().queue).toMatchObject({ waiting: 0, granted: 999, queued: 999 })
    bucket.close()
  })

  it('serves higher classes first, FIFO within a class', async () => {
    const bucket = new TokenBucket({ rate: 10, burst: 1, now })
    await bucket.acquire()
    const order: string[] = []
    track(order, 'low1', bucket.acquire(1, { priority: 'low' }))
    track(order, 'normal1', bucket.acquire(1))
    track(order, 'low2', bucket.acquire(1, { priority: 3 }))
    track(order, 'critical', bucket.acquire(1, { priority: 'critical' }))
    track(order, 'normal2', bucket.acquire(1, { priority: 'normal' }))
    await vi.advanceTimersByTimeAsync(500)
    expect(order).toEqual(['critical', 'normal1', 'normal2', 'low1', 'low2'])
    bucket.close()
  })

  it('a caller of a higher class takes free tokens at once; a caller of a waiting class queues behind', async () => {
    const bucket = new TokenBucket({ rate: 10, burst: 5, now })
    await bucket.acquire(5)
    const order: string[] = []
    track(order, 'big-low', bucket.acquire(5, { priority: 'low' })) // waits 500 ms for 5
    await vi.advanceTimersByTimeAsync(100)
    track(order, 'small-high', bucket.acquire(1, { priority: 'high' })) // one token is there: taken now
    track(order, 'small-low', bucket.acquire(1, { priority: 'low' })) // behind big-low
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual(['small-high'])
    await vi.advanceTimersByTimeAsync(600)
    expect(order).toEqual(['small-high', 'big-low', 'small-low'])
    bucket.close()
  })

  it('rejects at maxWait with OverloadError (queue-timeout); maxWait 0 refuses at once (rate-limit)', async () => {
    const bucket = new TokenBucket({ rate: 1, burst: 1, now })
    await bucket.acquire()
    const order: string[] = []
    track(order, 'first', bucket.acquire(1, { maxWait: 2000 }))
    track(order, 'second', bucket.acquire(1, { maxWait: 1500 })) // its turn comes at 2 s: too late
    track(order, 'far', bucket.acquire(1, { maxWait: 500 })) // the bucket alone needs 1 s
    track(order, 'now-or-never', bucket.acquire(1, { maxWait: 0 }))
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual(['now-or-never!rate-limit'])
    await vi.advanceTimersByTimeAsync(500)
    expect(order.slice(1)).toEqual(['far!queue-timeout'])
    await vi.advanceTimersByTimeAsync(500)
    expect(order.slice(2)).toEqual(['first'])
    await vi.advanceTimersByTimeAsync(500)
    expect(order.slice(3)).toEqual(['second!queue-timeout'])
    const error = await bucket.acquire(1, { maxWait: 0 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OverloadError)
    expect((error as OverloadError).retryAfter).toBe(1)
    bucket.close()
  })

  it('an aborted waiter gives its place up at once: the next one gets its tokens', async () => {
    const bucket = new TokenBucket({ rate: 10, burst: 1, now })
    await bucket.acquire()
    const controller = new AbortController()
    const order: string[] = []
    track(order, 'aborted', bucket.acquire(1, { signal: controller.signal }))
    track(order, 'next', bucket.acquire(1))
    await vi.advanceTimersByTimeAsync(50)
    controller.abort(new Error('caller left'))
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual(['aborted!AbortedError'])
    await vi.advanceTimersByTimeAsync(50)
    expect(order).toEqual(['aborted!AbortedError', 'next'])
    await expect(bucket.acquire(1, { signal: controller.signal })).rejects.toBeInstanceOf(AbortedError)
    expect(bucket.stats().queue).toMatchObject({ aborted: 1, granted: 1 })
    bucket.close()
  })

  it('refuses a bad n or option with InvalidArgumentError, naming it', async () => {
    const bucket = new TokenBucket({ rate: 10, burst: 3, now })
    for (const [call, argument] of [
      [() => bucket.acquire(4), 'n'],
      [() => bucket.acquire(0), 'n'],
      [() => bucket.acquire(NaN), 'n'],
      [() => bucket.acquire(1, { maxWait: -1 }), 'maxWait'],
      [() => bucket.acquire(1, { maxWait: Infinity }), 'maxWait'],
      [() => bucket.acquire(1, { priority: 7 as never }), 'priority'],
      [() => bucket.acquire(1, { signal: {} as never }), 'signal'],
    ] as const) {
      const error = await call().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect((error as InvalidArgumentError).argument).toBe(argument)
    }
    bucket.close()
  })

  it('refuses past maxQueue, and close() rejects the waiters', async () => {
    const bucket = new TokenBucket({ rate: 1, burst: 1, maxQueue: 2, now })
    await bucket.acquire()
    const order: string[] = []
    track(order, 'a', bucket.acquire())
    track(order, 'b', bucket.acquire())
    track(order, 'c', bucket.acquire())
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual(['c!rate-limit'])
    bucket.close()
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual(['c!rate-limit', 'a!queue-timeout', 'b!queue-timeout'])
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('TokenBucket pacing: a leaky bucket', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('spaces grants evenly instead of letting the burst through', async () => {
    const bucket = new TokenBucket({ rate: 10, burst: 10, pacing: true, now })
    const times: number[] = []
    const start = Date.now()
    const all = Array.from({ length: 5 }, () => bucket.acquire().then(() => times.push(Date.now() - start)))
    await vi.advanceTimersByTimeAsync(400)
    await Promise.all(all)
    expect(times).toEqual([0, 100, 200, 300, 400])
    // tryAcquire paces too: right after a grant, nothing more.
    expect(bucket.tryAcquire()).toBe(false)
    expect(bucket.retryAfterMs()).toBe(100)
    bucket.close()
  })

  it('without pacing the same bucket lets its burst through at once', async () => {
    const bucket = new TokenBucket({ rate: 10, burst: 10, now })
    let granted = 0
    for (let i = 0; i < 5; i++) void bucket.acquire().then(() => granted++)
    await vi.advanceTimersByTimeAsync(0)
    expect(granted).toBe(5)
    bucket.close()
  })
})

describe('TokenBucket.reserve: settle after the answer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('settling below the estimate gives the rest back to the waiters at once', async () => {
    const bucket = new TokenBucket({ rate: 100, burst: 1000, now })
    const reservation = await bucket.reserve(1000)
    expect(reservation.amount).toBe(1000)
    const order: string[] = []
    track(order, 'waiter', bucket.acquire(300))
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual([])
    reservation.settle(600) // 400 back
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual(['waiter'])
    expect(bucket.available()).toBeCloseTo(100, 6)
    reservation.settle(0) // only the first settle counts
    expect(bucket.available()).toBeCloseTo(100, 6)
  })

  it('settling above the estimate overdraws: later callers wait it out', async () => {
    const bucket = new TokenBucket({ rate: 100, burst: 1000, now })
    const reservation = await bucket.reserve(1000)
    reservation.settle(1500) // 500 more than the bucket had
    expect(bucket.available()).toBe(0)
    expect(bucket.retryAfterMs(100)).toBeCloseTo(6000, 6)
  })

  it('cancel gives it all back; settle refuses a bad cost', async () => {
    const bucket = new TokenBucket({ rate: 100, burst: 1000, now })
    const reservation = await bucket.reserve(800)
    expect(() => reservation.settle(-1)).toThrow(InvalidArgumentError)
    reservation.cancel()
    expect(reservation.settled).toBe(true)
    expect(bucket.available()).toBe(1000)
  })

  it('an overdraw made after the bucket refilled is charged from now, not lost', async () => {
    const bucket = new TokenBucket({ rate: 100, burst: 1000, now })
    const reservation = await bucket.reserve(100)
    await vi.advanceTimersByTimeAsync(10_000) // full again long ago
    reservation.settle(600)
    expect(bucket.available()).toBeCloseTo(500, 6)
  })
})

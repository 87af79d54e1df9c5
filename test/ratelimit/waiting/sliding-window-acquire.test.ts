import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { SlidingWindowLimiter } from '../../../lib/components/ratelimit/sliding-window-limiter'

const now = (): number => Date.now()

describe('SlidingWindowLimiter: acquire and reserve', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('a waiter is served when the bucket holding the permits leaves the window', async () => {
    const limiter = new SlidingWindowLimiter({ limit: 3, window: 1000, buckets: 10, now })
    await limiter.acquire(3)
    let served = -1
    const start = Date.now()
    void limiter.acquire(2).then(() => (served = Date.now() - start))
    await vi.advanceTimersByTimeAsync(999)
    expect(served).toBe(-1)
    await vi.advanceTimersByTimeAsync(1)
    expect(served).toBe(1000)
    expect(limiter.available()).toBe(1)
    limiter.close()
  })

  it('settle gives back to the bucket the estimate was taken in, while it is in the window', async () => {
    const limiter = new SlidingWindowLimiter({ limit: 100, window: 1000, buckets: 10, now })
    const reservation = await limiter.reserve(80)
    await vi.advanceTimersByTimeAsync(500)
    reservation.settle(30)
    expect(limiter.available()).toBe(70)
    // 500 ms later the bucket it was taken in leaves the window with what was kept of it.
    await vi.advanceTimersByTimeAsync(500)
    expect(limiter.available()).toBe(100)
    limiter.close()
  })

  it('an overdraw lands in the newest bucket and stays a full window', async () => {
    const limiter = new SlidingWindowLimiter({ limit: 100, window: 1000, buckets: 10, now })
    const reservation = await limiter.reserve(50)
    await vi.advanceTimersByTimeAsync(500)
    reservation.settle(120) // 70 more, charged now
    expect(limiter.available()).toBe(0)
    await vi.advanceTimersByTimeAsync(500) // the estimate's bucket leaves
    expect(limiter.available()).toBe(30)
    await vi.advanceTimersByTimeAsync(500) // the overdraw leaves
    expect(limiter.available()).toBe(100)
    limiter.close()
  })

  it('a give-back after its bucket left the window gives nothing more', async () => {
    const limiter = new SlidingWindowLimiter({ limit: 100, window: 1000, buckets: 10, now })
    const reservation = await limiter.reserve(60)
    await vi.advanceTimersByTimeAsync(1500)
    await limiter.acquire(100)
    reservation.cancel()
    expect(limiter.available()).toBe(0)
    limiter.close()
  })
})

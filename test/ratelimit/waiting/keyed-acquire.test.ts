import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { InvalidArgumentError } from '../../../lib/foundation/errors/invalid-argument-error'
import { OverloadError } from '../../../lib/foundation/errors/overload-error'
import { KeyedLimiter } from '../../../lib/components/ratelimit/keyed-limiter'
import type { Limiter } from '../../../lib/components/ratelimit/limiter'
import { TokenBucket } from '../../../lib/components/ratelimit/token-bucket'

const now = (): number => Date.now()

describe('KeyedLimiter: acquire and reserve per key', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('each key waits in its own queue: a waiting key does not hold another back', async () => {
    const keyed = new KeyedLimiter(() => new TokenBucket({ rate: 10, burst: 1, now }), { now })
    await keyed.acquire('a')
    const order: string[] = []
    void keyed.acquire('a').then(() => order.push('a'))
    void keyed.acquire('b').then(() => order.push('b'))
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual(['b'])
    await vi.advanceTimersByTimeAsync(100)
    expect(order).toEqual(['b', 'a'])
    keyed.close()
  })

  it('reserve and settle move the key’s own limiter', async () => {
    const keyed = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 100, now }), { now })
    const reservation = await keyed.reserve('tenant', 100)
    expect(keyed.get('tenant')?.available()).toBe(0)
    reservation.settle(40)
    expect(keyed.get('tenant')?.available()).toBe(60)
    keyed.close()
  })

  it('refuses a key the pool has no room for, a bad key, and a limiter that cannot wait', async () => {
    const keyed = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 1, now }), { now, maxKeys: 1 })
    await keyed.acquire('first') // exhausted: not at rest, so never evicted for a new key
    await expect(keyed.acquire('second')).rejects.toBeInstanceOf(OverloadError)
    await expect(keyed.acquire(42 as never)).rejects.toBeInstanceOf(InvalidArgumentError)
    const plain: Limiter = { tryAcquire: () => true, available: () => 1, retryAfterMs: () => 0, close: () => undefined }
    const cannotWait = new KeyedLimiter(() => plain)
    await expect(cannotWait.acquire('k')).rejects.toBeInstanceOf(InvalidArgumentError)
    keyed.close()
  })
})

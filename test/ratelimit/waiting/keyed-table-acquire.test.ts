import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { AbortedError } from '../../../lib/foundation/errors/aborted-error'
import { InvalidArgumentError } from '../../../lib/foundation/errors/invalid-argument-error'
import { OverloadError } from '../../../lib/foundation/errors/overload-error'
import { track } from '../../helpers/settle-order'
import { KeyedLimiter } from '../../../lib/components/ratelimit/keyed-limiter'

// Fake timers drive each waiting key's timer and the clock the table reads (Date.now is faked with them).
const now = (): number => Date.now()

describe('KeyedLimiter table form: acquire per key', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('a key waits for its own tokens (10/s) while another key is served at once', async () => {
    const keyed = new KeyedLimiter({ rate: 10, burst: 1, maxKeys: 100, now })
    const order: string[] = []
    for (const label of ['a1', 'a2', 'a3']) track(order, label, keyed.acquire('a'))
    track(order, 'b1', keyed.acquire('b'))
    await vi.advanceTimersByTimeAsync(0)
    expect(order).toEqual(['a1', 'b1'])
    expect(vi.getTimerCount()).toBe(1) // one timer for key a's queue, none for b (served without a queue)
    await vi.advanceTimersByTimeAsync(100)
    expect(order).toEqual(['a1', 'b1', 'a2'])
    await vi.advanceTimersByTimeAsync(100)
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3'])
    expect(vi.getTimerCount()).toBe(0) // the queue went with its last waiter
    expect(keyed.stats().queue).toMatchObject({ waiting: 0, queued: 2, granted: 2, refused: 0 })
    keyed.close()
  })

  it('serves a key by priority then FIFO, and times out or aborts a waiter', async () => {
    const keyed = new KeyedLimiter({ rate: 10, burst: 1, maxKeys: 100, now })
    await keyed.acquire('k')
    const order: string[] = []
    const abort = new AbortController()
    track(order, 'low', keyed.acquire('k', 1, { priority: 'low' }))
    track(order, 'aborted', keyed.acquire('k', 1, { signal: abort.signal }))
    track(order, 'high', keyed.acquire('k', 1, { priority: 'critical' }))
    track(order, 'short', keyed.acquire('k', 1, { maxWait: 50 }))
    abort.abort()
    await vi.advanceTimersByTimeAsync(60)
    expect(order).toEqual(['aborted!AbortedError', 'short!queue-timeout'])
    await vi.advanceTimersByTimeAsync(200)
    expect(order).toEqual(['aborted!AbortedError', 'short!queue-timeout', 'high', 'low'])
    keyed.close()
  })

  it('maxQueue bounds the waiters of every key together', async () => {
    const keyed = new KeyedLimiter({ rate: 1, burst: 1, maxKeys: 100, maxQueue: 2, now })
    for (const key of ['a', 'b', 'c']) await keyed.acquire(key)
    const waits = [keyed.acquire('a'), keyed.acquire('b')]
    await expect(keyed.acquire('c')).rejects.toBeInstanceOf(OverloadError)
    expect(keyed.stats().queue).toMatchObject({ waiting: 2, refused: 1 })
    await vi.advanceTimersByTimeAsync(1000)
    await Promise.all(waits)
    await expect(keyed.acquire('c', 1, { maxWait: 0 })).resolves.toBeUndefined()
    keyed.close()
  })

  it('refuses reserve (no give-back in a table), a bad key, n over the burst and close()d waiters', async () => {
    const keyed = new KeyedLimiter({ rate: 1, burst: 2, maxKeys: 100, now })
    await expect(keyed.reserve('k', 1)).rejects.toThrow(/factory form: a keyed table cannot give permits back/)
    await expect(keyed.reserve('k', 1)).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(keyed.acquire(7 as unknown as string)).rejects.toThrow(/key/)
    await expect(keyed.acquire('k', 3)).rejects.toThrow(/at most 2/)
    await expect(keyed.acquire('k', 1, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortedError)
    await keyed.acquire('k', 2)
    const pending = keyed.acquire('k')
    keyed.close()
    await expect(pending).rejects.toBeInstanceOf(OverloadError)
    expect(vi.getTimerCount()).toBe(0)
  })
})

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { Coalescer } from '../../lib/foundation/common/coalescer'
import { Hedger } from '../../lib/components/resilience/hedger'
import { RetryBudget } from '../../lib/components/resilience/retry-budget'
import { HotKeyCache } from '../../lib/components/hotkeys/hot-key-cache'
import { AbortedError } from '../../lib/foundation/errors/aborted-error'

/** A promise settled by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)))
  return { promise, resolve, reject }
}

describe('Coalescer: one call for concurrent identical requests', () => {
  it('1 000 concurrent callers of one key make one call and all get its result', async () => {
    const coalescer = new Coalescer<number>()
    const origin = deferred<number>()
    let calls = 0
    const all = Array.from({ length: 1000 }, () =>
      coalescer.run('GET /product/42', () => {
        calls++
        return origin.promise
      }),
    )
    origin.resolve(42)
    expect(await Promise.all(all)).toEqual(Array(1000).fill(42))
    expect(calls).toBe(1)
    expect(coalescer.stats()).toEqual({ calls: 1, joined: 999, inFlight: 0, overflow: 0 })
  })

  it('shares a failure, keeps nothing once settled, and runs other keys apart', async () => {
    const coalescer = new Coalescer<string>({ maxKeys: 1 })
    const failing = deferred<string>()
    const a = coalescer.run('a', () => failing.promise)
    const b = coalescer.run('a', () => Promise.resolve('never called'))
    const other = coalescer.run('b', () => Promise.resolve('b')) // over maxKeys: run on its own
    failing.reject(new Error('down'))
    await expect(a).rejects.toThrow('down')
    await expect(b).rejects.toThrow('down')
    expect(await other).toBe('b')
    expect(await coalescer.run('a', () => Promise.resolve('again'))).toBe('again')
    expect(coalescer.stats().overflow).toBe(1)
  })
})

describe('HotKeyCache.getOrLoad', () => {
  it('1 000 concurrent misses of a hot key whose value expired reach the origin once', async () => {
    let now = 0
    const cache = new HotKeyCache<string>({ k: 4, ttl: 100, now: () => now, seed: 1 })
    let loads = 0
    const load = (key: string) => {
      loads++
      return new Promise<string>((resolve) => setImmediate(() => resolve(`value of ${key}`)))
    }
    expect(await cache.getOrLoad('flash-sale', load)).toBe('value of flash-sale')
    expect(cache.get('flash-sale')).toBe('value of flash-sale') // hot: cached
    now += 200 // expired
    const values = await Promise.all(Array.from({ length: 1000 }, () => cache.getOrLoad('flash-sale', load)))
    expect(new Set(values)).toEqual(new Set(['value of flash-sale']))
    expect(loads).toBe(2)
    cache.close()
  })
})

describe('Hedger', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('sends a second attempt once the first is slower than the percentile, and aborts the loser', async () => {
    const hedger = new Hedger({ percentile: 0.95, budget: 1, minSamples: 20, samples: 160 }) // re-sorted every 10
    for (let i = 1; i <= 100; i++) hedger.record(i) // p95 = 95 ms
    expect(hedger.delayMs()).toBe(95)
    const attempts: Array<{ signal: AbortSignal; answer: ReturnType<typeof deferred<string>> }> = []
    const result = hedger.run((signal) => {
      const answer = deferred<string>()
      attempts.push({ signal, answer })
      return answer.promise
    })
    await vi.advanceTimersByTimeAsync(94)
    expect(attempts).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(attempts).toHaveLength(2)
    attempts[1].answer.resolve('from the hedge')
    expect(await result).toBe('from the hedge')
    expect(attempts[0].signal.aborted).toBe(true)
    expect(attempts[0].signal.reason).toBeInstanceOf(AbortedError)
    expect(hedger.stats()).toMatchObject({ calls: 1, hedged: 1, hedgeWon: 1 })
  })

  it('does not hedge without enough samples, nor beyond its budget (shared with retries)', async () => {
    const budget = new RetryBudget({ ratio: 0, minPerSecond: 0 })
    const hedger = new Hedger({ budget, minSamples: 20 })
    let attempts = 0
    const slow = () => {
      attempts++
      return new Promise<string>((resolve) => setTimeout(() => resolve('slow'), 1000))
    }
    const unmeasured = hedger.run(slow)
    await vi.advanceTimersByTimeAsync(1000)
    expect(await unmeasured).toBe('slow')
    for (let i = 0; i < 50; i++) hedger.record(10)
    const denied = hedger.run(slow)
    await vi.advanceTimersByTimeAsync(1000)
    expect(await denied).toBe('slow')
    expect(attempts).toBe(2)
    expect(hedger.stats().denied).toBe(1)
    hedger.close()
    budget.close()
  })
})

// execute(fn, { signal, priority }): the same contract on every component that has it (docs/vocabulary.md).
import { describe, expect, it } from 'vitest'

import {
  AbortedError,
  AdaptiveBulkhead,
  BbrLimiter,
  CircuitBreaker,
  InvalidArgumentError,
  isAbortedError,
  isOverloadError,
  OverloadError,
  Priority,
  SreBreaker,
} from '../../lib/index'

type Executor = {
  execute<T>(fn: (signal?: AbortSignal) => T, options?: { signal?: AbortSignal }): Promise<T>
  close(): void
}

const components: Array<[string, () => Executor & { busy(): number }]> = [
  [
    'BbrLimiter',
    () => {
      const limiter = new BbrLimiter({ signal: () => 0, now: () => 0 })
      return Object.assign(limiter, { busy: () => limiter.inFlight + limiter.stats().admitted })
    },
  ],
  [
    'AdaptiveBulkhead',
    () => {
      const bulkhead = new AdaptiveBulkhead({ now: () => 0 })
      return Object.assign(bulkhead, { busy: () => bulkhead.inFlight + bulkhead.stats().admitted })
    },
  ],
  [
    'SreBreaker',
    () => {
      const breaker = new SreBreaker({ now: () => 0 })
      return Object.assign(breaker, { busy: () => breaker.stats().calls })
    },
  ],
  [
    'CircuitBreaker',
    () => {
      const breaker = new CircuitBreaker({ now: () => 0 })
      return Object.assign(breaker, { busy: () => breaker.stats().calls })
    },
  ],
]

describe.each(components)('%s.execute', (_name, make) => {
  it('hands the signal to fn and settles with its result', async () => {
    const c = make()
    const controller = new AbortController()
    let seen: AbortSignal | undefined
    await expect(
      c.execute(
        (signal) => {
          seen = signal
          return 'ok'
        },
        { signal: controller.signal },
      ),
    ).resolves.toBe('ok')
    expect(seen).toBe(controller.signal)
    await expect(c.execute((signal) => signal)).resolves.toBeUndefined()
    c.close()
  })

  it('an already aborted signal rejects with AbortedError before anything is acquired or counted', async () => {
    const c = make()
    let ran = false
    const reason = new Error('client went away')
    const error = await c
      .execute(
        () => {
          ran = true
        },
        { signal: AbortSignal.abort(reason) },
      )
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AbortedError)
    expect(isAbortedError(error)).toBe(true)
    expect((error as AbortedError).cause).toBe(reason)
    expect(ran).toBe(false)
    expect(c.busy()).toBe(0)
    c.close()
  })

  it('a bad fn or bad options reject with InvalidArgumentError and count nothing as an outcome', async () => {
    const c = make()
    await expect(c.execute(42 as never)).rejects.toThrow(InvalidArgumentError)
    await expect(c.execute(() => 1, 'fast' as never)).rejects.toThrow(/argument `options`/)
    await expect(c.execute(() => 1, { signal: {} as never })).rejects.toThrow(/argument `options.signal`/)
    expect(c.busy()).toBe(0)
    c.close()
  })

  it('a thrown error and a rejection pass through unchanged', async () => {
    const c = make()
    const boom = new Error('boom')
    await expect(
      c.execute(() => {
        throw boom
      }),
    ).rejects.toBe(boom)
    await expect(c.execute(() => Promise.reject(boom))).rejects.toBe(boom)
    c.close()
  })
})

describe('BbrLimiter.execute', () => {
  it('admits at options.priority and rejects a shed call with OverloadError (reason and retryAfter)', async () => {
    let load = 0
    const limiter = new BbrLimiter({ signal: () => load, now: () => 0, minInFlight: 1, queueDelay: false })
    const held = [limiter.tryAcquire(), limiter.tryAcquire()]
    load = 1000
    const error = await limiter.execute(() => 1, { priority: 'low' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OverloadError)
    expect(isOverloadError(error)).toBe(true)
    expect(error).toMatchObject({ reason: 'in-flight', retryAfter: 1 })
    // critical may fill 1.2 x the estimate: still over it here, and it is counted in its own class
    await limiter.execute(() => 1, { priority: Priority.critical }).catch(() => undefined)
    expect(limiter.stats().byPriority.low.shedInFlight).toBe(1)
    expect(limiter.stats().byPriority.critical.shedInFlight + limiter.stats().byPriority.critical.admitted).toBe(1)
    for (const t of held) limiter.release(t)
    expect(limiter.inFlight).toBe(0)
    limiter.close()
  })

  it('releases the token when fn settles, whichever way', async () => {
    const limiter = new BbrLimiter({ signal: () => 0, now: () => 0 })
    let inside = -1
    await limiter.execute(async () => {
      inside = limiter.inFlight
    })
    await limiter.execute(() => Promise.reject(new Error('x'))).catch(() => undefined)
    expect([inside, limiter.inFlight, limiter.stats().invalidReleases]).toEqual([1, 0, 0])
    limiter.close()
  })
})

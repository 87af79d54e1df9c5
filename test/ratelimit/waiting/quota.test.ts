import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { InvalidArgumentError } from '../../../lib/foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../../lib/foundation/errors/invalid-option-error'
import { Quota } from '../../../lib/components/ratelimit/quota'

const now = (): number => Date.now()

describe('Quota: requests and cost per window, one call', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('takes a request and the estimate together, or neither', async () => {
    const quota = new Quota({ window: 60_000, requests: 3, cost: 1000, now })
    const a = quota.tryReserve(600)
    expect(a?.amount).toBe(600)
    expect(quota.tryReserve(600)).toBeUndefined() // cost lacking: the request is not kept either
    expect(quota.stats().requests?.available).toBeCloseTo(2, 6)
    expect(quota.tryReserve(400)).toBeDefined()
    expect(quota.tryReserve(0)).toBeDefined()
    expect(quota.tryReserve(0)).toBeUndefined() // requests lacking
    quota.close()
  })

  it('waits for the cost a settle gives back, at once', async () => {
    const quota = new Quota({ window: 60_000, requests: 60, cost: 90_000, now })
    const first = await quota.reserve(90_000)
    let second: unknown
    void quota.reserve(4000).then((r) => (second = r))
    await vi.advanceTimersByTimeAsync(0)
    expect(second).toBeUndefined()
    first.settle(2000) // 88 000 back
    await vi.advanceTimersByTimeAsync(0)
    expect(second).toBeDefined()
    expect(quota.stats().cost?.available).toBeCloseTo(84_000, 6)
    quota.close()
  })

  it('waits for refill: 90 000 tokens a minute is 1 500 a second', async () => {
    const quota = new Quota({ window: 60_000, cost: 90_000, now })
    ;(await quota.reserve(90_000)).settle(90_000)
    let waited = -1
    const start = Date.now()
    void quota.reserve(3000).then(() => (waited = Date.now() - start))
    await vi.advanceTimersByTimeAsync(2000)
    expect(waited).toBe(2000)
    quota.close()
  })

  it('cancel gives back the request and the cost', async () => {
    const quota = new Quota({ window: 60_000, requests: 1, cost: 100, now })
    const r = await quota.reserve(100)
    r.cancel()
    expect(quota.stats().requests?.available).toBe(1)
    expect(quota.stats().cost?.available).toBe(100)
    quota.close()
  })

  it('pause empties both limits until then; observe lowers to what the upstream says remains', async () => {
    const quota = new Quota({ window: 60_000, requests: 60, cost: 90_000, now })
    quota.observe({ requests: 10, cost: 5000 })
    expect(quota.stats().requests?.available).toBeCloseTo(10, 6)
    expect(quota.stats().cost?.available).toBeCloseTo(5000, 6)
    quota.observe({ requests: 50 }) // never raises
    expect(quota.stats().requests?.available).toBeCloseTo(10, 6)
    quota.pause(3000)
    expect(quota.tryReserve(0)).toBeUndefined()
    await vi.advanceTimersByTimeAsync(3000)
    expect(quota.stats().requests?.available).toBeCloseTo(0, 6)
    await vi.advanceTimersByTimeAsync(1000) // one request a second comes back after the pause
    expect(quota.tryReserve(100)).toBeDefined()
    quota.close()
  })

  it('refuses bad options and arguments, naming them', async () => {
    expect(() => new Quota({ window: 60_000 })).toThrow(InvalidOptionError)
    expect(() => new Quota({ window: 0, requests: 1 })).toThrow(InvalidOptionError)
    const quota = new Quota({ window: 1000, cost: 10, now })
    await expect(quota.reserve(11)).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(quota.reserve(-1)).rejects.toBeInstanceOf(InvalidArgumentError)
    expect(() => quota.pause(-5)).toThrow(InvalidArgumentError)
    quota.close()
  })
})

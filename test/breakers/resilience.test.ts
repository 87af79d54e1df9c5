import { describe, expect, it } from 'vitest'

import {
  BreakerOpenError,
  FallbackChainError,
  InvalidArgumentError,
  RetryBudget,
  fullJitterDelay,
  retry,
  withFallbacks,
} from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'

const noWait = () => Promise.resolve()
const failing = (calls: { n: number }) => () => {
  calls.n++
  return Promise.reject(new Error('503'))
}

describe('RetryBudget', () => {
  it('under a backend that fails every call, retries stay within ratio x requests + the reserve', async () => {
    const clock = new ManualClock(0)
    const budget = new RetryBudget({ ratio: 0.1, minPerSecond: 10, window: 10_000, now: clock.now })
    const calls = { n: 0 }
    for (let i = 0; i < 10_000; i++) {
      await retry(failing(calls), { budget, attempts: 3, sleep: noWait }).catch(() => undefined)
    }
    const retries = calls.n - 10_000
    // Without the budget: 20 000 retries. With it: 10 % of 10 000, plus 10/s over the 10 s window.
    expect(retries).toBeLessThanOrEqual(1100)
    expect(retries).toBeGreaterThanOrEqual(1090)
    expect(budget.stats()).toMatchObject({ requests: 10_000, retries, available: 0 })
  })

  it('keeps the cap over a rolling window while time passes', () => {
    const clock = new ManualClock(0)
    const budget = new RetryBudget({ ratio: 0.2, minPerSecond: 1, window: 1000, buckets: 10, now: clock.now })
    let granted = 0
    for (let step = 0; step < 600; step++) {
      clock.advance(10)
      budget.recordRequest()
      for (let i = 0; i < 5; i++) if (budget.tryAcquire()) granted++
      const { requests, retries } = budget.stats()
      expect(retries).toBeLessThanOrEqual(Math.ceil(0.2 * requests + 1))
    }
    // 600 requests over 6 s: about 0.2 per request plus 1 per second.
    expect(granted).toBeGreaterThan(100)
    expect(granted).toBeLessThan(0.2 * 600 + 6 + 25)
  })
})

describe('retry', () => {
  it('retries with exponential backoff and full jitter until it succeeds', async () => {
    const delays: number[] = []
    let attempt = -1
    const result = await retry(
      (n) => {
        attempt = n
        if (n < 4) throw new Error(`fail ${n}`)
        return 'ok'
      },
      { attempts: 6, baseDelay: 100, maxDelay: 300, random: () => 0.5, sleep: async (ms) => void delays.push(ms) },
    )
    expect(result).toBe('ok')
    expect(attempt).toBe(4)
    // Ceilings 100, 200, 300 (capped), 300; half of each with random() = 0.5.
    expect(delays).toEqual([50, 100, 150, 150])
  })

  it('throws the last error after `attempts` calls, and does not retry a breaker rejection', async () => {
    const calls = { n: 0 }
    await expect(retry(failing(calls), { attempts: 3, sleep: noWait })).rejects.toThrow('503')
    expect(calls.n).toBe(3)
    let opened = 0
    const open = () => {
      opened++
      throw new BreakerOpenError(undefined)
    }
    await expect(retry(open, { attempts: 5, sleep: noWait })).rejects.toBeInstanceOf(BreakerOpenError)
    expect(opened).toBe(1)
    const picky = { n: 0 }
    await expect(retry(failing(picky), { attempts: 5, sleep: noWait, retryOn: (_e, n) => n < 1 })).rejects.toThrow(
      '503',
    )
    expect(picky.n).toBe(2)
  })

  it('full jitter spreads delays over [0, min(max, base * 2^n))', () => {
    expect(fullJitterDelay(0, 100, 1000, () => 0)).toBe(0)
    expect(fullJitterDelay(3, 100, 1000, () => 0.999)).toBeCloseTo(799.2)
    expect(fullJitterDelay(10, 100, 1000, () => 0.5)).toBe(500)
  })

  it('rejects bad arguments with typed errors', async () => {
    await expect(retry(undefined as never)).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(retry(() => 1, { attempts: 0 })).rejects.toThrow(/option `attempts` must be an integer >= 1/)
    await expect(retry(() => 1, { budget: {} as RetryBudget })).rejects.toThrow(/option `budget` must be a RetryBudget/)
    await expect(retry(() => 1, { sleep: 5 as never })).rejects.toThrow(/option `sleep` must be a function/)
  })
})

describe('withFallbacks', () => {
  it('returns the first step that succeeds; each fallback sees the errors before it', async () => {
    const seen: unknown[][] = []
    const result = await withFallbacks(
      () => Promise.reject(new Error('primary down')),
      (errors) => {
        seen.push(errors.map((e) => (e as Error).message))
        throw new Error('mirror down')
      },
      (errors) => {
        seen.push(errors.map((e) => (e as Error).message))
        return 'cached'
      },
      () => 'never reached',
    )
    expect(result).toBe('cached')
    expect(seen).toEqual([['primary down'], ['primary down', 'mirror down']])
    await expect(withFallbacks(() => 'fast')).resolves.toBe('fast')
  })

  it('rejects with FallbackChainError holding every error when all steps fail', async () => {
    const failure = await withFallbacks(
      () => {
        throw new Error('a')
      },
      () => Promise.reject(new Error('b')),
    ).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(FallbackChainError)
    expect((failure as FallbackChainError).errors.map((e) => (e as Error).message)).toEqual(['a', 'b'])
    expect((failure as FallbackChainError).code).toBe('ERR_BULWARK_FALLBACKS_FAILED')
    await expect(withFallbacks(() => 1, 'x' as never)).rejects.toThrow(/argument `fallbacks\[0\]` must be a function/)
  })
})

import { isBreakerOpenError } from '../../foundation/errors/error-guards'
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions, optionalFunction, optionalNumber } from '../../foundation/common/validate'
import { fullJitterDelay } from './backoff'
import { RetryBudget } from './retry-budget'

export interface RetryOptions {
  /** Calls at most, the first one included (default 3). */
  attempts?: number
  /** Shared budget that caps retries at a share of requests; without one, every failure is retried. */
  budget?: RetryBudget
  /** Ceiling of the first retry's delay, ms; doubles each retry (default 100). */
  baseDelay?: number
  /** Largest delay ceiling, ms (default 5000). */
  maxDelay?: number
  /** Which errors are worth retrying (default: all but BreakerOpenError, which says the backend is down). */
  retryOn?: (error: unknown, attempt: number) => boolean
  /** Random source in [0, 1) for the jitter (default Math.random). */
  random?: () => number
  /** Waits `ms` (default: a timer); tests pass one that does not wait. */
  sleep?: (ms: number) => Promise<void>
}

const timerSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const notBreakerOpen = (error: unknown): boolean => !isBreakerOpenError(error)

/**
 * Calls `fn` until it succeeds, retrying failures after exponential backoff with full jitter, within `attempts`
 * and the budget. When it stops, the last error is thrown as it was. `fn` gets the attempt number (0 first).
 */
export async function retry<T>(fn: (attempt: number) => T | Promise<T>, options?: RetryOptions): Promise<T> {
  if (typeof fn !== 'function') throw new InvalidArgumentError('fn', fn, 'a function')
  const o = checkOptions<RetryOptions>(options, 'options')
  const attempts = optionalNumber('attempts', o.attempts, 3, { integer: true, min: 1, max: 1000 })
  const baseDelay = optionalNumber('baseDelay', o.baseDelay, 100, { min: 0, max: 86_400_000 })
  const maxDelay = optionalNumber('maxDelay', o.maxDelay, 5000, { min: 0, max: 86_400_000 })
  if (o.budget !== undefined && !(o.budget instanceof RetryBudget)) {
    throw new InvalidOptionError('budget', o.budget, 'a RetryBudget')
  }
  const budget = o.budget
  const retryOn = optionalFunction<(error: unknown, attempt: number) => boolean>('retryOn', o.retryOn) ?? notBreakerOpen
  const random = optionalFunction<() => number>('random', o.random) ?? Math.random
  const sleep = optionalFunction<(ms: number) => Promise<void>>('sleep', o.sleep) ?? timerSleep

  budget?.recordRequest()
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (error) {
      const last = attempt + 1 >= attempts
      if (last || !retryOn(error, attempt) || (budget !== undefined && !budget.tryAcquire())) throw error
    }
    await sleep(fullJitterDelay(attempt, baseDelay, maxDelay, random))
  }
}

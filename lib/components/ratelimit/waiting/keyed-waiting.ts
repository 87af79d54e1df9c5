import { InvalidArgumentError } from '../../../foundation/errors/invalid-argument-error'
import { OverloadError } from '../../../foundation/errors/overload-error'
import type { AcquireOptions } from './acquire-options'
import type { Reservation } from './reservation'

/** A key's limiter that can wait: TokenBucket, SlidingWindowLimiter, or your own with the same two methods. */
export interface WaitingLimiter {
  acquire(n?: number, options?: AcquireOptions): Promise<void>
  reserve(n: number, options?: AcquireOptions): Promise<Reservation>
}

/** The pool of a KeyedLimiter, as far as waiting asks it. */
interface LimiterPool {
  get(key: string): object | undefined
  retryAfterMs(): number
}

/**
 * Waits on the limiter of `key` (already bounded, or the error its type check made): each key's limiter keeps
 * its own queue and its one timer. A key the pool has no room for is refused at once with OverloadError: its
 * wait is the pool's, until an entry comes to rest.
 */
export function waitOnKey<T>(
  pool: LimiterPool,
  key: string | InvalidArgumentError,
  wait: (limiter: WaitingLimiter) => Promise<T>,
): Promise<T> {
  if (typeof key !== 'string') return Promise.reject(key)
  const limiter = pool.get(key) as Partial<WaitingLimiter> | undefined
  if (limiter === undefined) {
    const ms = pool.retryAfterMs()
    return Promise.reject(new OverloadError('rate-limit', ms < Infinity ? ms / 1000 : 0))
  }
  if (typeof limiter.acquire !== 'function' || typeof limiter.reserve !== 'function') {
    const expected = 'a key whose limiter waits (acquire and reserve: TokenBucket, SlidingWindowLimiter)'
    return Promise.reject(new InvalidArgumentError('key', key, expected))
  }
  return wait(limiter as WaitingLimiter)
}

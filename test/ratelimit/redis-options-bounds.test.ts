// Regression: a window of 1e308 ms made the default insurance limiter's idle timeout Infinity, and a tiny limit made
// its rate 0, so the constructor (or worse, a timed-out decision inside a timer) threw an error blaming options the
// caller never gave (`idleTimeout`, `rate`). Found by the reliability fuzzing.
import { describe, expect, it } from 'vitest'

import type { RedisScriptClient } from '../../lib/components/ratelimit/redis/redis-options'
import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { fieldOf } from '../helpers/typed-errors'

const redis: RedisScriptClient = { evalsha: async () => [0, 0], eval: async () => [0, 0] }

describe('RedisRateLimiter option bounds', () => {
  it('blames window, hosts or limit when the insurance limiter could not be made from them', () => {
    expect(fieldOf(() => new RedisRateLimiter({ redis, limit: 5, window: 1.7976931348623157e308 }))).toBe('window')
    expect(fieldOf(() => new RedisRateLimiter({ redis, limit: 5, window: 1000, hosts: 1e7 }))).toBe('hosts')
    expect(fieldOf(() => new RedisRateLimiter({ redis, limit: 1e-300, window: 1e10, algorithm: 'gcra' }))).toBe('limit')
    expect(fieldOf(() => new RedisRateLimiter({ redis, limit: 5e-324, window: 1000 }))).toBe('limit')
  })

  it('accepts a small share per host, and its insurance limiter is made', () => {
    const limiter = new RedisRateLimiter({ redis, limit: 1e-3, window: 1000, algorithm: 'gcra', hosts: 1000 })
    expect(() => limiter.insurance.get('k')).not.toThrow()
    limiter.close()
  })
})

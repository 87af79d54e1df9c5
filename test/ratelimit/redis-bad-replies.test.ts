// Regression: a client that answered something other than the script's reply, or threw on the NOSCRIPT resend, left
// the decision unsettled forever and raised an unhandled rejection (found by the reliability fuzzing).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import type { RedisScriptClient } from '../../lib/components/ratelimit/redis/redis-options'
import { isRedisError, RedisError } from '../../lib/index'
import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'

type Answer = () => Promise<unknown>
function client(evalsha: Answer, evalScript: Answer = evalsha): RedisScriptClient {
  return { evalsha, eval: evalScript, status: 'ready' }
}

const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
beforeEach(() => {
  unhandled.length = 0
  process.on('unhandledRejection', onUnhandled)
})
afterEach(() => {
  process.off('unhandledRejection', onUnhandled)
})

async function decideWithin(limiter: RedisRateLimiter, ms: number) {
  const timer = new Promise((resolve) => setTimeout(() => resolve('never settled'), ms))
  return Promise.race([limiter.consume('k'), timer])
}

describe('RedisRateLimiter with a client that answers nonsense', () => {
  for (const reply of [null, 'OK', [1], { 0: 1 }, ['1', '2'], [1, 0, 0]]) {
    it(`reply ${JSON.stringify(reply)}: the insurance limiter decides, and the error is reported`, async () => {
      const limiter = new RedisRateLimiter({ redis: client(async () => reply), limit: 5, window: 1000, timeout: 20 })
      const errors: Error[] = []
      limiter.onError((e) => errors.push(e))
      const decision = await decideWithin(limiter, 500)
      expect(decision).toMatchObject({ allowed: true, source: 'insurance' })
      expect(errors[0].message).toMatch(/unexpected reply/)
      expect(isRedisError(errors[0])).toBe(true)
      await new Promise((r) => setImmediate(r))
      expect(unhandled).toEqual([])
    })
  }

  it('eval that throws synchronously after a NOSCRIPT: the insurance limiter decides, nothing goes unhandled', async () => {
    const noScript = async () => {
      throw new Error('NOSCRIPT No matching script')
    }
    const throwing = () => {
      throw Object.create(null)
    }
    const limiter = new RedisRateLimiter({ redis: client(noScript, throwing), limit: 5, window: 1000, timeout: 20 })
    const errors: Error[] = []
    limiter.onError((e) => errors.push(e))
    expect(await decideWithin(limiter, 500)).toMatchObject({ source: 'insurance' })
    expect(errors[0]).toBeInstanceOf(RedisError) // the client threw a bare object: a typed error all the same
    expect(errors[0]).toMatchObject({
      code: 'ERR_BULWARK_REDIS',
      message: expect.stringMatching(/^the Redis call failed: an object/),
    })
    await new Promise((r) => setImmediate(r))
    expect(unhandled).toEqual([])
  })

  it('a reply with negative numbers gives a decision with remaining and retryAfterMs >= 0', async () => {
    const limiter = new RedisRateLimiter({
      // { remaining, wait µs }: a positive wait is a refusal, however small.
      redis: client(async () => [-3, 5e-324]),
      limit: 5,
      window: 1000,
      timeout: 20,
    })
    expect(await decideWithin(limiter, 500)).toEqual({ allowed: false, remaining: 0, retryAfterMs: 0, source: 'redis' })
  })
})

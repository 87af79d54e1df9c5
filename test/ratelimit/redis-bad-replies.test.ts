// Regression: a client that answered something other than the script's reply, or threw on the NOSCRIPT resend, left
// the decision unsettled forever and raised an unhandled rejection (found by the reliability fuzzing).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import type { RedisScriptClient } from '../../lib/components/ratelimit/redis/redis-options'
import { isRedisError, RedisError } from '../../lib/index'
import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { ManualClock } from '../helpers/manual-clock'

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
  for (const reply of [null, 'OK', [1], { 0: 1 }, ['1', '2'], [1, 0, 0], [1, NaN], [0, Infinity], [0, -Infinity]]) {
    it(`reply ${String(reply)}: the insurance limiter decides, and the error is reported`, async () => {
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

  // Before: 2^53 µs made the local refusal memory refuse the key for 285 years (issue 32, item 7).
  for (const [algorithm, longest] of [
    ['sliding-window', 2000], // the rest of this window and all of the next
    ['gcra', 1000], // a burst's worth
  ] as const) {
    it(`${algorithm}: a wait of 2^53 µs, refused or emptied, is clamped to ${longest} ms`, async () => {
      const clock = new ManualClock(0)
      let reply = [0, 2 ** 53]
      let calls = 0
      const redis = client(async () => (calls++, reply))
      const limiter = new RedisRateLimiter({ redis, algorithm, limit: 5, window: 1000, timeout: 20, now: clock.now })
      expect(await limiter.consume('k')).toEqual({
        allowed: false,
        remaining: 0,
        retryAfterMs: longest,
        source: 'redis',
      })
      const local = await limiter.consume('k')
      expect(local).toMatchObject({ allowed: false, source: 'local' })
      expect(local.retryAfterMs).toBeCloseTo(longest, 2)
      clock.advance(longest)
      reply = [2 ** 53, -(2 ** 53)] // admitted, the key empty "for ever", and more permits left than the limit
      expect(await limiter.consume('k')).toEqual({ allowed: true, remaining: 5, retryAfterMs: 0, source: 'redis' })
      const empty = await limiter.consume('k')
      expect(empty).toMatchObject({ allowed: false, source: 'local' })
      expect(empty.retryAfterMs).toBeCloseTo(longest, 2)
      clock.advance(longest)
      reply = [4, 0]
      expect(await limiter.consume('k')).toMatchObject({ allowed: true, source: 'redis' })
      expect(calls).toBe(3)
    })
  }

  it('a live rule moves the clamp with the window it sets', async () => {
    const redis = client(async () => [0, 2 ** 53])
    const limiter = new RedisRateLimiter({ redis, limit: 5, window: 1000, timeout: 20, localRefusal: false })
    limiter.configure({ window: 5000 })
    // Obeyed at the next decision: the rest of this window and all of the next, of the new window.
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 10_000, source: 'redis' })
    limiter.close()
  })
})

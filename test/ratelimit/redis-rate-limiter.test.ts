import { describe, expect, it } from 'vitest'

import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../lib/foundation/errors/invalid-option-error'
import { KeyedLimiter } from '../../lib/components/ratelimit/keyed-limiter'
import { RedisRateLimiter, type RateLimitDecision } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { GCRA_SCRIPT, SLIDING_WINDOW_SCRIPT, scriptSha } from '../../lib/components/ratelimit/redis/redis-scripts'
import { TokenBucket } from '../../lib/components/ratelimit/token-bucket'
import { ManualClock } from '../helpers/manual-clock'
import { redisTarget, useRedisClients } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'

const target = redisTarget()

describe.skipIf(!target)('RedisRateLimiter on a real Redis', () => {
  const { client } = useRedisClients(target!)

  function allowedCount(decisions: RateLimitDecision[]): number {
    return decisions.filter((d) => d.allowed).length
  }

  describe.each(['sliding-window', 'gcra'] as const)('%s: many clients at once', (algorithm) => {
    it('admit exactly the limit, never more (injected clock: no refill during the run)', async () => {
      const clock = new ManualClock(1_000_000)
      const keyPrefix = `${uniqueName('exact')}:`
      const limiters = await Promise.all(
        [0, 1, 2, 3].map(
          async () =>
            new RedisRateLimiter({
              redis: await client(),
              limit: 300,
              window: 60_000,
              keyPrefix,
              algorithm,
              timeout: 5000,
              now: clock.now,
            }),
        ),
      )
      const calls: Array<Promise<RateLimitDecision>> = []
      for (let i = 0; i < 2000; i++) calls.push(limiters[i % 4].consume('tenant-1'))
      const decisions = await Promise.all(calls)
      expect(decisions.every((d) => d.source === 'redis')).toBe(true)
      expect(allowedCount(decisions)).toBe(300)
      // Another key is untouched.
      expect((await limiters[0].consume('tenant-2')).remaining).toBe(299)
    })

    it('admit exactly the limit on the Redis server clock too', async () => {
      const keyPrefix = `${uniqueName('server-time')}:`
      // A day-long window: no refill and no window edge that could matter within the run.
      const limiters = await Promise.all(
        [0, 1, 2].map(
          async () =>
            new RedisRateLimiter({
              redis: await client(),
              limit: 100,
              window: 86_400_000,
              keyPrefix,
              algorithm,
              timeout: 5000,
            }),
        ),
      )
      const decisions = await Promise.all(Array.from({ length: 600 }, (_, i) => limiters[i % 3].consume('k')))
      expect(allowedCount(decisions)).toBe(100)
      const denied = decisions.find((d) => !d.allowed) as RateLimitDecision
      expect(denied.remaining).toBe(0)
      expect(denied.retryAfterMs).toBeGreaterThan(0)
    })
  })

  it('sliding window: the previous window counts by the share of it still inside the sliding window', async () => {
    const clock = new ManualClock(10_000) // window index 10 of 1000 ms windows
    const limiter = new RedisRateLimiter({
      redis: await client(),
      limit: 10,
      window: 1000,
      keyPrefix: `${uniqueName('edges')}:`,
      now: clock.now,
      localRefusal: false, // every decision asks Redis: this tests the script
    })
    const take = async (count: number) =>
      allowedCount(await Promise.all(Array.from({ length: count }, () => limiter.consume('k'))))

    expect(await take(12)).toBe(10)
    const denied = await limiter.consume('k')
    // Full in this window: room only in the next one, once 1 of the 10 previous permits has slid out (100 ms in).
    expect(denied).toEqual({ allowed: false, remaining: 0, retryAfterMs: 1100, source: 'redis' })

    clock.time = 11_000 // next window, nothing of the previous one has slid out yet: 10 * 1.0
    expect(await take(1)).toBe(0)
    clock.time = 11_500 // half of it has: 10 * 0.5 = 5 used
    expect((await limiter.consume('k')).remaining).toBe(4)
    expect(await take(5)).toBe(4)
    clock.time = 12_000 // previous = 5 (this window's count at 11 000..11 999), weight 1
    expect(await take(6)).toBe(5)
    clock.time = 14_000 // two windows on: nothing left
    expect(await take(11)).toBe(10)
  })

  it('gcra: a burst, then one permit per interval, with exact retry times', async () => {
    const clock = new ManualClock(5_000)
    const limiter = new RedisRateLimiter({
      redis: await client(),
      limit: 10,
      window: 1000,
      burst: 3,
      algorithm: 'gcra',
      keyPrefix: `${uniqueName('gcra')}:`,
      now: clock.now,
      localRefusal: false,
    })
    const first = await limiter.consume('k')
    expect(first).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0, source: 'redis' })
    expect((await limiter.consume('k', 2)).allowed).toBe(true)
    expect(await limiter.consume('k')).toEqual({ allowed: false, remaining: 0, retryAfterMs: 100, source: 'redis' })
    clock.time += 99
    expect((await limiter.consume('k')).allowed).toBe(false)
    clock.time += 1
    expect((await limiter.consume('k')).allowed).toBe(true)
    clock.time += 10_000 // long idle: back to a full burst, not more
    const burst = await Promise.all([1, 2, 3, 4].map(() => limiter.consume('k')))
    expect(burst.map((d) => d.allowed)).toEqual([true, true, true, false])
  })

  it('uses one key per limited key and limit, with the key as Redis Cluster hash tag, expiring on its own', async () => {
    const admin = await client()
    const keyPrefix = `${uniqueName('keys')}:`
    const limiter = new RedisRateLimiter({ redis: await client(), limit: 5, window: 2000, keyPrefix })
    await limiter.consume('user:42')
    const keys = await admin.keys(`${keyPrefix}*`)
    expect(keys).toEqual([`${keyPrefix}{user:42}:s:5:2000`])
    const ttl = await admin.pttl(keys[0])
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(4000)
  })

  it('runs the script by SHA and sends it again after SCRIPT FLUSH (NOSCRIPT)', async () => {
    const admin = await client()
    const keyPrefix = `${uniqueName('noscript')}:`
    const sliding = new RedisRateLimiter({ redis: await client(), limit: 5, window: 60_000, keyPrefix })
    const gcra = new RedisRateLimiter({ redis: await client(), limit: 5, window: 60_000, keyPrefix, algorithm: 'gcra' })
    const shas = [scriptSha(SLIDING_WINDOW_SCRIPT), scriptSha(GCRA_SCRIPT)]
    // Both load their scripts when made; the flush comes after.
    await Promise.all([sliding.ready(), gcra.ready()])
    expect(await admin.script('EXISTS', ...shas)).toEqual([1, 1])
    await admin.script('FLUSH')
    expect(await admin.script('EXISTS', ...shas)).toEqual([0, 0])
    expect((await sliding.consume('a')).source).toBe('redis')
    expect((await gcra.consume('a')).source).toBe('redis')
    expect(await admin.script('EXISTS', ...shas)).toEqual([1, 1])
    await admin.script('FLUSH')
    const again = await Promise.all([sliding.consume('a'), gcra.consume('a')])
    expect(again.map((d) => [d.source, d.remaining])).toEqual([
      ['redis', 3],
      ['redis', 3],
    ])
    expect(sliding.stats()).toMatchObject({ redis: 2, insurance: 0, errors: 0 })
  })

  it('a Redis error sends the decision to insurance and is reported on onError', async () => {
    const admin = await client()
    const keyPrefix = `${uniqueName('wrongtype')}:`
    await admin.rpush(`${keyPrefix}{k}:s:5:60000`, 'not a hash')
    const insurance = new KeyedLimiter(() => new TokenBucket({ rate: 1, burst: 2, now: () => 0 }))
    const limiter = new RedisRateLimiter({ redis: await client(), limit: 5, window: 60_000, keyPrefix, insurance })
    const errors: Error[] = []
    limiter.onError((e) => errors.push(e))
    const decisions = await Promise.all([1, 2, 3].map(() => limiter.consume('k')))
    expect(decisions.map((d) => [d.allowed, d.source])).toEqual([
      [true, 'insurance'],
      [true, 'insurance'],
      [false, 'insurance'],
    ])
    expect(decisions[2].retryAfterMs).toBe(1000)
    // The three decisions went to Redis in one script call: one error, three decisions affected.
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ code: 'ERR_BULWARK_REDIS', message: expect.stringMatching(/WRONGTYPE/) })
    expect((errors[0].cause as Error).message).toMatch(/^WRONGTYPE/) // the client's own error
    expect(limiter.stats()).toMatchObject({ redis: 0, insurance: 3, errors: 3 })
  })

  it('rejects bad arguments and options with typed errors', async () => {
    const redis = await client()
    const limiter = new RedisRateLimiter({ redis, limit: 5, window: 1000 })
    await expect(limiter.consume(42 as unknown as string)).rejects.toThrow(InvalidArgumentError)
    await expect(limiter.consume('k', 0)).rejects.toThrow(/argument `n` must be a number > 0 and <= 5, got 0/)
    await expect(limiter.consume('k', 6)).rejects.toThrow(InvalidArgumentError)
    expect(() => new RedisRateLimiter({ redis: {} as never, limit: 5, window: 1000 })).toThrow(/option `redis`/)
    expect(() => new RedisRateLimiter({ redis, limit: 0, window: 1000 })).toThrow(InvalidOptionError)
    expect(() => new RedisRateLimiter({ redis, limit: 5, window: 1000, keyPrefix: 'a{b' })).toThrow(
      /option `keyPrefix`/,
    )
    expect(() => new RedisRateLimiter({ redis, limit: 5, window: 1000, algorithm: 'leaky' as never })).toThrow(
      /option `algorithm`/,
    )
    expect(() => new RedisRateLimiter({ redis, limit: 5, window: 1000, insurance: {} as never })).toThrow(
      /option `insurance`/,
    )
  })
})

// Regressions (issue 13): two limits on one key shared one Redis hash and refused wrongly; keys from requests were
// stored whole in Redis, however long.
import { describe, expect, it } from 'vitest'

import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { MAX_KEY_BYTES, boundedKey } from '../../lib/components/ratelimit/redis/redis-keys'
import { ManualClock } from '../helpers/manual-clock'
import { redisTarget, useRedis } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'

const target = redisTarget()

describe.skipIf(!target)('RedisRateLimiter keys', () => {
  const r = useRedis(target!)

  it('a 100-per-minute and a 5-per-second limit on one user keep separate state', async () => {
    const clock = new ManualClock(1_000_000)
    const keyPrefix = `${uniqueName('two-limits')}:`
    const common = { redis: r.redis, keyPrefix, now: clock.now }
    for (const algorithm of ['sliding-window', 'gcra'] as const) {
      const perMinute = new RedisRateLimiter({ ...common, algorithm, limit: 100, window: 60_000 })
      const perSecond = new RedisRateLimiter({ ...common, algorithm, limit: 5, window: 1000 })
      const burst = await Promise.all(Array.from({ length: 6 }, () => perSecond.consume('user-1')))
      expect(burst.map((d) => d.allowed)).toEqual([true, true, true, true, true, false])
      expect(await perMinute.consume('user-1')).toMatchObject({ allowed: true, remaining: 99, source: 'redis' })
      clock.advance(2000) // two windows: the per-second limit is whole again
      expect(await perSecond.consume('user-1')).toMatchObject({ allowed: true, source: 'redis' })
      // Two taken in the minute; GCRA has refilled one of them in 2 s (one permit per 600 ms).
      expect((await perMinute.consume('user-1')).remaining).toBe(algorithm === 'gcra' ? 99 : 98)
    }
    expect((await r.redis.keys(`${keyPrefix}*`)).sort()).toEqual([
      `${keyPrefix}{user-1}:g:100:60000:100`,
      `${keyPrefix}{user-1}:g:5:1000:5`,
      `${keyPrefix}{user-1}:s:100:60000`,
      `${keyPrefix}{user-1}:s:5:1000`,
    ])
  })

  it(`keys over ${MAX_KEY_BYTES} bytes are stored as a digest, and still limited one by one`, async () => {
    const keyPrefix = `${uniqueName('long')}:`
    const limiter = new RedisRateLimiter({ redis: r.redis, keyPrefix, limit: 2, window: 60_000, localRefusal: false })
    const long = (c: string) => c.repeat(10_000)
    for (const key of [long('a'), long('b')]) {
      const decisions = await Promise.all([1, 2, 3].map(() => limiter.consume(key)))
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, false])
    }
    // Multi-byte characters count as UTF-8 bytes: 67 of them are 201 bytes.
    expect(boundedKey('é'.repeat(100))).toBe('é'.repeat(100))
    expect(boundedKey('€'.repeat(67))).not.toBe('€'.repeat(67))
    expect(boundedKey('x'.repeat(MAX_KEY_BYTES))).toBe('x'.repeat(MAX_KEY_BYTES))
    const stored = await r.redis.keys(`${keyPrefix}*`)
    expect(stored).toHaveLength(2)
    for (const key of stored) expect(Buffer.byteLength(key)).toBeLessThan(keyPrefix.length + 60)
  })

  it("a key that holds '}' is hashed, and no plain key can name a hashed key's state", async () => {
    const keyPrefix = `${uniqueName('braces')}:`
    const limiter = new RedisRateLimiter({ redis: r.redis, keyPrefix, limit: 1, window: 60_000, localRefusal: false })
    const tricky = 'a}b'
    expect((await limiter.consume(tricky)).allowed).toBe(true)
    // The digest as a key of its own is another key: ':h' marks the hashed form.
    expect((await limiter.consume(boundedKey(tricky))).allowed).toBe(true)
    expect((await limiter.consume(tricky)).allowed).toBe(false)
    expect((await r.redis.keys(`${keyPrefix}*`)).sort()).toEqual(
      [`${keyPrefix}{${boundedKey(tricky)}}:h:s:1:60000`, `${keyPrefix}{${boundedKey(tricky)}}:s:1:60000`].sort(),
    )
  })
})

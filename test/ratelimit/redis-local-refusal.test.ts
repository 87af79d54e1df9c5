// Local refusal (issue 15): a key Redis refused with retryAfterMs R is refused on this host for R without a call,
// and never admits more than Redis would have.
import { describe, expect, it } from 'vitest'

import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { ManualClock } from '../helpers/manual-clock'
import { seededRandom } from '../helpers/seeded-random.mjs'
import { redisTarget, useRedis } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'

const target = redisTarget()
// Every decision here must come from Redis or the local refusal: a slow reply on a loaded machine must not fall to
// the insurance limiter (after 50 ms by default) and change the decisions these tests compare.
const patient = 10_000

describe.skipIf(!target)('RedisRateLimiter local refusal', () => {
  const r = useRedis(target!)

  it('refuses a key Redis emptied or refused, for the wait Redis gave, without asking Redis', async () => {
    const clock = new ManualClock(10_000)
    const limiter = new RedisRateLimiter({
      redis: r.redis,
      limit: 10,
      window: 1000,
      keyPrefix: `${uniqueName('refusal')}:`,
      now: clock.now,
      timeout: patient,
    })
    // One call for the 10: the last permit went with the 10th, and Redis said when the next one comes.
    await Promise.all(Array.from({ length: 10 }, () => limiter.consume('k')))
    const calls = limiter.stats().calls
    const refused = await limiter.consume('k')
    expect(refused).toMatchObject({ allowed: false, remaining: 0, source: 'local' })
    expect(refused.retryAfterMs).toBeCloseTo(1100, 2)
    clock.advance(600)
    expect((await limiter.consume('k')).retryAfterMs).toBeCloseTo(500, 2)
    expect((await limiter.consume('other')).source).toBe('redis') // other keys are Redis' to decide
    expect(limiter.stats()).toMatchObject({ local: 2, refusedKeys: 1, calls: calls + 1 })
    clock.advance(500) // the wait is over: Redis decides again, and admits
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, source: 'redis' })
  })

  it('a larger request is refused locally; a smaller one is asked of Redis', async () => {
    const clock = new ManualClock(10_000)
    const limiter = new RedisRateLimiter({
      redis: r.redis,
      limit: 10,
      window: 1000,
      algorithm: 'gcra',
      keyPrefix: `${uniqueName('costs')}:`,
      now: clock.now,
      timeout: patient,
    })
    expect((await limiter.consume('k', 8)).allowed).toBe(true)
    expect(await limiter.consume('k', 5)).toMatchObject({ allowed: false, source: 'redis' })
    expect(await limiter.consume('k', 6)).toMatchObject({ allowed: false, source: 'local' })
    expect(await limiter.consume('k', 2)).toMatchObject({ allowed: true, remaining: 0, source: 'redis' })
    // That took the last permit: any request is refused here until the next one.
    const refused = await limiter.consume('k', 1)
    expect(refused).toMatchObject({ allowed: false, source: 'local' })
    expect(refused.retryAfterMs).toBeCloseTo(100, 2)
  })

  it.each(['sliding-window', 'gcra'] as const)(
    '%s: the same decisions as without it, on a random schedule (it only refuses what Redis would refuse)',
    async (algorithm) => {
      const random = seededRandom(algorithm === 'gcra' ? 7 : 11)
      const clocks = [new ManualClock(50_000), new ManualClock(50_000)]
      const limiters = [true, false].map(
        (localRefusal, i) =>
          new RedisRateLimiter({
            redis: r.redis,
            limit: 20,
            window: 1000,
            burst: 5,
            algorithm,
            keyPrefix: `${uniqueName(`schedule-${localRefusal}`)}:`,
            now: clocks[i].now,
            localRefusal,
            timeout: patient,
          }),
      )
      const keys = ['a', 'b', 'c']
      const seen: boolean[][] = [[], []]
      for (let step = 0; step < 1500; step++) {
        const elapsed = Math.floor(random() * 40)
        const key = keys[Math.floor(random() * keys.length)]
        const n = 1 + Math.floor(random() * 3)
        for (let i = 0; i < 2; i++) {
          clocks[i].advance(elapsed)
          seen[i].push((await limiters[i].consume(key, n)).allowed)
        }
      }
      expect(seen[0]).toEqual(seen[1])
      const s = limiters[0].stats()
      expect(s.local).toBeGreaterThan(100) // it did refuse locally, many times
      expect(s.redis + s.local).toBe(1500)
    },
    60_000,
  )
})

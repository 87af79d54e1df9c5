// Shadow mode in RedisRateLimiter (docs/rules/shadow.md): a refusal from Redis, from its local refusals or from the
// insurance limiter is counted and admitted; `bulwark set ... shadow=on` switches it for every member of the host.
import { describe, expect, it } from 'vitest'

import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { setRule } from '../../lib/ops/cli/set-command'
import { ManualClock } from '../helpers/manual-clock'
import { redisTarget, useRedis } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'

const target = redisTarget()

describe.skipIf(!target)('RedisRateLimiter in shadow mode', () => {
  const redis = useRedis(target!)

  it("admits Redis' refusals while `bulwark set` has it in shadow mode, counting them", async () => {
    const clock = new ManualClock(9_000_000)
    const shared = uniqueName('redis-shadow')
    const options = { limit: 2, window: 60_000, keyPrefix: `${shared}:`, shared, now: clock.now, localRefusal: true }
    const limiter = new RedisRateLimiter({ redis: redis.redis, ...options })
    await limiter.ready()
    const decide = async (n: number) => Promise.all(Array.from({ length: n }, () => limiter.consume('k')))
    expect((await decide(3)).map((d) => d.allowed)).toEqual([true, true, false])
    expect(setRule(`redis-rate-limiter.${shared}`, ['shadow=on'])).toMatchObject({ shadow: { enabled: true } })
    const shadowed = await decide(3)
    expect(shadowed.map((d) => d.allowed)).toEqual([true, true, true])
    expect(shadowed.every((d) => d.retryAfterMs === 0)).toBe(true)
    expect(limiter.stats().rules.shadow).toEqual({ enabled: true, wouldRefuse: [{ reason: 'rate', count: 3 }] })
    setRule(`redis-rate-limiter.${shared}`, ['shadow=off'])
    expect((await decide(1))[0].allowed).toBe(false)
    limiter.close()
  })
})

import { describe, expect, it } from 'vitest'

import { InvalidOptionError } from '../../lib/foundation/errors/invalid-option-error'
import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { setRule } from '../../lib/ops/cli/set-command'
import { inspectRegions } from '../../lib/ops/top/inspect'
import { ManualClock } from '../helpers/manual-clock'
import { redisTarget, useRedis } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'

const target = redisTarget()

describe.skipIf(!target)('RedisRateLimiter: a live rule (docs/rules/live-rules.md)', () => {
  const redis = useRedis(target!)
  const client = async () => redis.redis

  async function admitted(limiter: RedisRateLimiter, key: string, n: number): Promise<number> {
    const decisions = await Promise.all(Array.from({ length: n }, () => limiter.consume(key)))
    expect(decisions.every((d) => d.source === 'redis')).toBe(true)
    return decisions.filter((d) => d.allowed).length
  }

  it('configure() changes the limit: the next decisions go to Redis under the new one', async () => {
    const clock = new ManualClock(5_000_000)
    const limiter = new RedisRateLimiter({
      redis: await client(),
      limit: 2,
      window: 60_000,
      keyPrefix: `${uniqueName('live')}:`,
      now: clock.now,
    })
    await limiter.ready()
    expect(await admitted(limiter, 'k', 5)).toBe(2)
    expect(limiter.configure({ limit: 4 })).toEqual({ version: 1, values: { limit: 4, window: 60_000 } })
    expect(limiter.limit).toBe(4)
    // A key names its limit: the count under the new rule starts afresh.
    expect(await admitted(limiter, 'k', 6)).toBe(4)
    expect(limiter.stats().rules).toEqual({ version: 1, values: { limit: 4, window: 60_000 } })
    limiter.close()
  })

  it('waiting callers obey the new rule: acquire takes up to the new limit', async () => {
    const limiter = new RedisRateLimiter({
      redis: await client(),
      limit: 2,
      window: 60_000,
      keyPrefix: `${uniqueName('live-wait')}:`,
    })
    await limiter.ready()
    await expect(limiter.acquire('k', 3, { maxWait: 50 })).rejects.toThrow(/`n`/)
    limiter.configure({ limit: 5 })
    await expect(limiter.acquire('k', 3, { maxWait: 1000 })).resolves.toBeUndefined()
    expect((await limiter.consume('k', 2)).allowed).toBe(true)
    expect((await limiter.consume('k')).allowed).toBe(false)
    limiter.close()
  })

  it('refuses a bad rule whole, naming the field, and keeps the one in force', async () => {
    const limiter = new RedisRateLimiter({ redis: await client(), limit: 10, window: 1000 })
    expect(() => limiter.configure({ limit: 0 })).toThrow(InvalidOptionError)
    expect(() => limiter.configure({ window: -1 })).toThrow(/`window`/)
    expect(() => limiter.configure({ burst: 5 })).toThrow(
      /`burst` must be a field that changes at run time \(limit, window, shadow\)/,
    )
    expect(() => limiter.configure({ keyPrefix: 'x' } as object)).toThrow(/`keyPrefix` must be a field that changes/)
    expect(limiter.stats().rules).toEqual({ version: 0, values: { limit: 10, window: 1000 } })
    const gcra = new RedisRateLimiter({ redis: await client(), limit: 10, window: 1000, algorithm: 'gcra' })
    expect(gcra.configure({ burst: 3 }).values).toEqual({ limit: 10, window: 1000, burst: 3 })
    limiter.close()
    gcra.close()
  })

  it('shared: a change made by one limiter, or by `bulwark set`, reaches the others at their next decision', async () => {
    const clock = new ManualClock(7_000_000)
    const shared = uniqueName('redis-rule')
    const options = { limit: 1, window: 60_000, keyPrefix: `${shared}:`, shared, now: clock.now }
    const a = new RedisRateLimiter({ redis: await client(), ...options })
    const b = new RedisRateLimiter({ redis: await client(), ...options })
    await Promise.all([a.ready(), b.ready()])
    const told: unknown[] = []
    b.onRuleChange((rule) => told.push(rule))
    a.configure({ limit: 3 })
    expect(b.limit).toBe(3) // reported at once, obeyed at the next decision
    expect(told).toEqual([])
    expect(await admitted(b, 'k', 5)).toBe(3)
    expect(told).toEqual([{ version: 1, values: { limit: 3, window: 60_000 } }])

    // The command line attaches to the rule's region without a Redis client.
    const set = setRule(`redis-rate-limiter.${shared}`, ['limit=2'])
    expect(set).toMatchObject({ version: 2, values: { limit: 2, window: 60_000 } })
    expect(await admitted(a, 'k2', 4)).toBe(2)
    const [report] = inspectRegions({ names: [shared] })
    expect(report.view).toMatchObject({
      type: 'redis-rate-limiter',
      algorithm: 'sliding-window',
      limit: 2,
      window: 60_000,
    })
    expect(() => setRule(`redis-rate-limiter.${shared}`, ['limit=0'])).toThrow(/`limit`/)
    a.close()
    b.close()
  })
})

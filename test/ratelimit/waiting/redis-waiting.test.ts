import { describe, expect, it } from 'vitest'

import { OverloadError } from '../../../lib/foundation/errors/overload-error'
import { RedisRateLimiter } from '../../../lib/components/ratelimit/redis/redis-rate-limiter'
import { RedisQuota } from '../../../lib/components/ratelimit/redis/redis-quota'
import { redisTarget, useRedisClients } from '../../helpers/redis-server'
import { uniqueName } from '../../helpers/unique-name'

const target = redisTarget()

describe.skipIf(!target)('waiting on Redis: RedisRateLimiter.acquire/reserve and RedisQuota', () => {
  const { client } = useRedisClients(target!)

  it('acquire serves a key’s waiters in order, no faster than the fleet limit (GCRA 20/s, burst 1)', async () => {
    const limiter = new RedisRateLimiter({
      redis: await client(),
      limit: 20,
      window: 1000,
      algorithm: 'gcra',
      burst: 1,
      keyPrefix: `${uniqueName('acq')}:`,
    })
    await limiter.ready()
    const start = performance.now()
    const order: number[] = []
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => limiter.acquire('k', 1, { maxWait: 10_000 }).then(() => order.push(i))),
    )
    expect(order).toEqual([0, 1, 2, 3, 4, 5])
    // Five waits of 50 ms at least: the limit holds (a lower bound only: never flaky).
    expect(performance.now() - start).toBeGreaterThanOrEqual(5 * 50 - 5)
    expect(limiter.stats().redis).toBeGreaterThanOrEqual(6)
    limiter.close()
  })

  it('reserve then settle gives the difference back in Redis', async () => {
    const limiter = new RedisRateLimiter({
      redis: await client(),
      limit: 10,
      window: 3_600_000,
      algorithm: 'gcra',
      keyPrefix: `${uniqueName('settle')}:`,
      localRefusal: false,
    })
    await limiter.ready()
    const reservation = await limiter.reserve('k', 10)
    expect((await limiter.consume('k', 1)).allowed).toBe(false)
    reservation.settle(4)
    const served = await limiter.acquire('k', 6, { maxWait: 5000 }).then(() => true)
    expect(served).toBe(true)
    expect((await limiter.consume('k', 1)).allowed).toBe(false)
    limiter.close()
  })

  it('maxWait 0 refuses at once; a waiter past maxWait is rejected', async () => {
    const limiter = new RedisRateLimiter({
      redis: await client(),
      limit: 1,
      window: 3_600_000,
      keyPrefix: `${uniqueName('refuse')}:`,
    })
    await limiter.ready()
    await limiter.acquire('k')
    await expect(limiter.acquire('k', 1, { maxWait: 0 })).rejects.toBeInstanceOf(OverloadError)
    const error = (await limiter.acquire('k', 1, { maxWait: 30 }).catch((e: unknown) => e)) as OverloadError
    expect(error.reason).toBe('queue-timeout')
    limiter.close()
  })

  it('RedisQuota: requests and cost taken in one call, shared by two hosts, never beyond either limit', async () => {
    const name = uniqueName('quota')
    const quotas = [await client(), await client()].map(
      (redis) => new RedisQuota({ redis, name, window: 3_600_000, requests: 5, cost: 10_000 }),
    )
    const taken = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        quotas[i % 2].reserve(1000, { maxWait: 200 }).then(
          () => 'ok',
          (e: OverloadError) => e.reason,
        ),
      ),
    )
    expect(taken.filter((t) => t === 'ok')).toHaveLength(5) // the request limit binds
    for (const q of quotas) q.close()
  })

  it('RedisQuota: a settle below the estimate serves a waiter on another host; cancel returns the request', async () => {
    const name = uniqueName('quota-settle')
    const [a, b] = [await client(), await client()].map(
      (redis) => new RedisQuota({ redis, name, window: 3_600_000, requests: 2, cost: 10_000 }),
    )
    const big = await a.reserve(10_000)
    let served = false
    const waiting = b.reserve(6000, { maxWait: 5000 }).then((r) => {
      served = true
      return r
    })
    big.settle(3000)
    const second = await waiting
    expect(served).toBe(true)
    second.cancel() // the request and the 6000 come back
    const third = await b.reserve(7000, { maxWait: 5000 })
    expect(third.amount).toBe(7000)
    await expect(a.reserve(0, { maxWait: 0 })).rejects.toBeInstanceOf(OverloadError) // two requests taken
    a.close()
    b.close()
  })

  it('RedisQuota: pause and observe slow the whole fleet down', async () => {
    const name = uniqueName('quota-pause')
    const quota = new RedisQuota({ redis: await client(), name, window: 60_000, requests: 600, cost: 90_000 })
    quota.observe({ cost: 1000 })
    await expect(quota.reserve(2000, { maxWait: 0 })).rejects.toBeInstanceOf(OverloadError)
    const fine = await quota.reserve(900, { maxWait: 0 })
    fine.settle(900)
    quota.pause(60_000)
    await expect(quota.reserve(0, { maxWait: 0 })).rejects.toBeInstanceOf(OverloadError)
    expect(quota.stats().errors).toBe(0)
    quota.close()
  })
})

// RedisRateLimiter on a real Redis Cluster (3 masters, a replica each, made by `redis-cli --cluster create`), through
// every supported cluster client.
import Redis from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { clusterSlot } from '../../lib/components/ratelimit/redis/cluster-slot'
import { RedisRateLimiter, type RateLimitDecision } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { CLIENT_FAMILIES, type Made } from '../helpers/redis-clients'
import { RedisCluster, clusterTarget } from '../helpers/redis-cluster'
import { uniqueName } from '../helpers/unique-name'

const target = clusterTarget()
const KEYS = Array.from({ length: 30 }, (_, i) => `tenant-${i}`)

describe.skipIf(!target)('RedisRateLimiter on Redis Cluster', () => {
  let cluster: RedisCluster
  let admin: Redis
  const made: Made[] = []

  beforeAll(async () => {
    cluster = await RedisCluster.start(target!)
    admin = new Redis(cluster.startupNodes[0].port, '127.0.0.1')
  }, 60_000)

  afterAll(async () => {
    await Promise.all(made.map((m) => m.close()))
    admin.disconnect()
    await cluster.stop()
  })

  /** The keys matching `pattern` that each master holds. */
  async function keysPerMaster(pattern: string): Promise<string[][]> {
    return Promise.all((await cluster.masterPorts()).map((port) => nodeKeys(port, pattern)))
  }

  it('computes the slot of a key as the server does (hash tags, braces in keys, UTF-8)', async () => {
    const keys = ['a', 'bulwark:rl:{user:42}:s:5:1000', 'p{}x', 'p{}x{y}', 'p{a}b{c}', 'p}{x}', '{}', 'p{é}', 'p{😀}:g']
    for (const key of keys) expect(clusterSlot(key)).toBe(await admin.cluster('KEYSLOT', key))
  })

  describe.each(CLIENT_FAMILIES)('$name', (family) => {
    async function client(connected = true) {
      const m = await family.cluster(cluster.startupNodes, connected)
      made.push(m)
      return m.client
    }

    it('admits exactly the limit per key across the shards, and keys land on every master', async () => {
      const keyPrefix = `${uniqueName('shards')}:`
      const make = async () =>
        new RedisRateLimiter({ redis: await client(), limit: 20, window: 86_400_000, keyPrefix, timeout: 5000 })
      const limiters = [await make(), await make()]
      const calls: Array<Promise<RateLimitDecision>> = []
      for (let i = 0; i < KEYS.length * 50; i++) calls.push(limiters[i % 2].consume(KEYS[i % KEYS.length]))
      const decisions = await Promise.all(calls)
      expect(decisions.filter((d) => d.source !== 'redis')).toEqual([])
      for (let k = 0; k < KEYS.length; k++) {
        const admitted = decisions.filter((d, i) => i % KEYS.length === k && d.allowed).length
        expect(admitted, KEYS[k]).toBe(20)
      }
      const perMaster = (await keysPerMaster(`${keyPrefix}*`)).map((keys) => keys.length)
      expect(perMaster).toHaveLength(3)
      expect(perMaster.every((n) => n > 0)).toBe(true)
      expect(perMaster.reduce((a, b) => a + b)).toBe(KEYS.length)
    })

    it('hash tags: every limit on one key lives on the key slot, whatever braces the key holds', async () => {
      const keyPrefix = `${uniqueName('tags')}:`
      const redis = await client()
      const perMinute = new RedisRateLimiter({ redis, limit: 100, window: 60_000, keyPrefix, timeout: 5000 })
      const perSecond = new RedisRateLimiter({ redis, limit: 5, window: 1000, keyPrefix, timeout: 5000 })
      const odd = ['user:{42}', '}', '', '{}', 'a}b', 'é😀', 'x'.repeat(300)]
      for (const key of odd) {
        const both = await Promise.all([perMinute.consume(key), perSecond.consume(key)])
        expect(
          both.map((d) => [d.source, d.remaining]),
          JSON.stringify(key),
        ).toEqual([
          ['redis', 99],
          ['redis', 4],
        ])
      }
      const stored = (await keysPerMaster(`${keyPrefix}*`)).flat()
      expect(stored).toHaveLength(odd.length * 2)
      // The two limits of one user sit in one slot, next to each other.
      const slots = await Promise.all(stored.map((key) => admin.cluster('KEYSLOT', key)))
      expect(new Set(slots).size).toBe(odd.length)
    })

    it.skipIf(family.name.startsWith('valkey-glide'))(
      'cold start: a burst of 2 400 decisions on a fresh client all go to Redis',
      async () => {
        const keyPrefix = `${uniqueName('cold')}:`
        const redis = await client(false)
        const limiter = new RedisRateLimiter({ redis, limit: 1e6, window: 60_000, keyPrefix, timeout: 3000 })
        const decisions = await Promise.all(Array.from({ length: 2400 }, (_, i) => limiter.consume(`user-${i}`)))
        const sources = { redis: 0, insurance: 0, local: 0 }
        for (const d of decisions) sources[d.source]++
        expect(sources).toEqual({ redis: 2400, insurance: 0, local: 0 })
        expect(limiter.stats()).toMatchObject({ errors: 0, timeouts: 0, notReady: 0 })
      },
    )
  })
})

async function nodeKeys(port: number, pattern: string): Promise<string[]> {
  const node = new Redis(port, '127.0.0.1')
  try {
    return await node.keys(pattern)
  } finally {
    node.disconnect()
  }
}

// A master of a real Redis Cluster killed (SIGKILL) under a steady stream of decisions: no decision waits past the
// timeout, and once its replica is promoted, Redis decides again, for the keys of the killed shard too.
import { performance } from 'perf_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { CLIENT_FAMILIES } from '../helpers/redis-clients'
import { RedisCluster, clusterTarget, poll } from '../helpers/redis-cluster'
import { uniqueName } from '../helpers/unique-name'

const target = clusterTarget()
const TIMEOUT = 100
const KEYS = Array.from({ length: 30 }, (_, i) => `tenant-${i}`)
// One client of each code base: ioredis (iovalkey and ioredis 5 share its cluster code), node-redis, GLIDE.
const FAMILIES = CLIENT_FAMILIES.filter((f) => ['ioredis 6', 'node-redis 6', 'valkey-glide 2'].includes(f.name))

interface Decision {
  key: string
  at: number
  ms: number
  source: string
}

describe.skipIf(!target)('RedisRateLimiter when a Redis Cluster master dies', () => {
  let cluster: RedisCluster

  beforeAll(async () => {
    cluster = await RedisCluster.start(target!)
  }, 60_000)

  afterAll(async () => {
    await cluster?.stop()
  })

  it.each(FAMILIES)(
    '$name: decisions stay within the timeout, and come from Redis again after the failover',
    async (family) => {
      const { client, close } = await family.cluster(cluster.startupNodes)
      const limiter = new RedisRateLimiter({
        redis: client,
        limit: 1e6,
        window: 60_000,
        keyPrefix: `${uniqueName('failover')}:`,
        timeout: TIMEOUT,
        openAfter: 3,
        probeInterval: 100,
      })
      limiter.onError(() => undefined)
      await limiter.ready()
      const t0 = performance.now()
      const decisions: Decision[] = []
      const pending: Array<Promise<void>> = []
      let timerLag = 0
      let expected = performance.now() + 2
      let next = 0
      // 1 000 decisions a second over 30 keys (some on every shard), from a timer every 2 ms.
      const load = setInterval(() => {
        const now = performance.now()
        timerLag = Math.max(timerLag, now - expected)
        expected = now + 2
        for (let i = 0; i < 2; i++) {
          const key = KEYS[next++ % KEYS.length]
          const start = performance.now()
          pending.push(
            limiter.consume(key).then((d) => {
              decisions.push({ key, at: start - t0, ms: performance.now() - start, source: d.source })
            }),
          )
        }
      }, 2)
      try {
        await new Promise((r) => setTimeout(r, 1000))
        const victim = await cluster.masterOf(`{${KEYS[0]}}`)
        const killedAt = performance.now() - t0
        await cluster.kill(victim)
        await cluster.waitForFailover()
        const promotedAt = performance.now() - t0
        // The client learns the new layout, and the circuit's next probe brings decisions back.
        const backAt = await poll('decisions from Redis again', async () => {
          const recent = decisions.filter((d) => d.at > performance.now() - t0 - 300)
          return recent.length > 100 && recent.every((d) => d.source === 'redis') ? performance.now() - t0 : undefined
        })
        await new Promise((r) => setTimeout(r, 500))
        clearInterval(load)
        await Promise.all(pending)
        const slowest = Math.max(...decisions.map((d) => d.ms))
        const after = decisions.filter((d) => d.at > backAt)
        const outage = decisions.filter((d) => d.at > killedAt && d.at < promotedAt)
        console.log(
          `${family.name}: killed at ${killedAt.toFixed(0)} ms, promoted at ${promotedAt.toFixed(0)}, back to Redis at ${backAt.toFixed(0)}; ` +
            `slowest ${slowest.toFixed(1)} ms (timer lag ${timerLag.toFixed(1)}); during the outage ` +
            `${outage.filter((d) => d.source !== 'redis').length} of ${outage.length} went to insurance`,
        )
        expect(slowest).toBeLessThanOrEqual(TIMEOUT + 40 + timerLag)
        expect(outage.some((d) => d.source === 'insurance')).toBe(true)
        // After the failover, every key is decided by Redis, those of the killed shard included.
        expect(after.filter((d) => d.source !== 'redis')).toEqual([])
        expect(new Set(after.map((d) => d.key)).size).toBe(KEYS.length)
      } finally {
        clearInterval(load)
        limiter.close()
        await close()
        await cluster.reviveAll()
      }
    },
    60_000,
  )
})

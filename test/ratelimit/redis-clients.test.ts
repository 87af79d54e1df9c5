// Every supported client against a real redis-server (Debian 12's 7.0: Debian 12 has no valkey-server, so Valkey's
// own clients are tested against Redis here).
import Redis from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { GCRA_SCRIPT, SLIDING_WINDOW_SCRIPT, scriptSha } from '../../lib/components/ratelimit/redis/redis-scripts'
import { CLIENT_FAMILIES, type Made } from '../helpers/redis-clients'
import { RedisServer, redisTarget } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'

const target = redisTarget(true)
const SHAS = [scriptSha(SLIDING_WINDOW_SCRIPT), scriptSha(GCRA_SCRIPT)]

describe.skipIf(!target)('RedisRateLimiter with each client', () => {
  let server: RedisServer
  let admin: Redis
  const made: Made[] = []

  beforeAll(async () => {
    server = await RedisServer.start(target!.binary as string)
    admin = new Redis(server.port, '127.0.0.1')
  })

  afterAll(async () => {
    await Promise.all(made.map((m) => m.close()))
    admin.disconnect()
    await server.stop()
  })

  describe.each(CLIENT_FAMILIES)('$name', (family) => {
    async function client() {
      const m = await family.standalone({ host: '127.0.0.1', port: server.port })
      made.push(m)
      return m.client
    }

    it.each(['sliding-window', 'gcra'] as const)(
      '%s: two limiters on two clients admit exactly the limit, all decided by Redis',
      async (algorithm) => {
        const keyPrefix = `${uniqueName('clients')}:`
        const make = async () =>
          new RedisRateLimiter({
            redis: await client(),
            limit: 100,
            window: 86_400_000,
            algorithm,
            keyPrefix,
            timeout: 5000,
          })
        const limiters = [await make(), await make()]
        const decisions = await Promise.all(Array.from({ length: 600 }, (_, i) => limiters[i % 2].consume('tenant')))
        expect(decisions.filter((d) => d.allowed)).toHaveLength(100)
        expect(decisions.filter((d) => d.source === 'insurance')).toEqual([])
        const refused = decisions.find((d) => !d.allowed)
        expect(refused?.retryAfterMs).toBeGreaterThan(0)
        expect((await limiters[0].consume('other')).remaining).toBe(99)
      },
    )

    it('loads its scripts when made (ready), and runs them again after SCRIPT FLUSH', async () => {
      const keyPrefix = `${uniqueName('flush')}:`
      const limiter = new RedisRateLimiter({
        redis: await client(),
        limit: 5,
        window: 60_000,
        keyPrefix,
        timeout: 5000,
      })
      await limiter.ready()
      await admin.script('FLUSH')
      expect(await admin.script('EXISTS', ...SHAS)).toEqual([0, 0])
      // A fresh limiter on the flushed server loads both scripts before its first decision.
      const fresh = new RedisRateLimiter({ redis: await client(), limit: 5, window: 60_000, keyPrefix, timeout: 5000 })
      await fresh.ready()
      expect(await admin.script('EXISTS', ...SHAS)).toEqual([1, 1])
      await admin.script('FLUSH')
      const decisions = await Promise.all([1, 2, 3].map(() => limiter.consume('k')))
      expect(decisions.map((d) => [d.source, d.allowed])).toEqual([
        ['redis', true],
        ['redis', true],
        ['redis', true],
      ])
      expect(limiter.stats()).toMatchObject({ redis: 3, insurance: 0, errors: 0 })
    })
  })
})

// Regression (issue 13): a client that never became ready (a wrong password: ioredis reconnects forever) sent every
// decision to insurance without counting a failure: the circuit stayed closed, `state` said 'redis', no event fired.
import Redis from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { RedisRateLimiter } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { ManualClock } from '../helpers/manual-clock'
import { poll } from '../helpers/redis-cluster'
import { RedisServer, redisTarget } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'

const target = redisTarget(true) // starts its own server with a password

describe.skipIf(!target)('RedisRateLimiter with a client that is not ready', () => {
  let server: RedisServer

  beforeAll(async () => {
    server = await RedisServer.start(target!.binary as string, { args: ['--requirepass', 'right'] })
  })

  afterAll(async () => {
    await server.stop()
  })

  it('a wrong password: not ready counts as a failure, opens the circuit, fires the event; back when fixed', async () => {
    const redis = new Redis(server.port, '127.0.0.1', { password: 'wrong', retryStrategy: () => 20 })
    redis.on('error', () => undefined) // WRONGPASS, again and again: expected
    const clock = new ManualClock(0)
    const limiter = new RedisRateLimiter({
      redis,
      limit: 10,
      window: 60_000,
      keyPrefix: `${uniqueName('wrongpass')}:`,
      timeout: 50,
      openAfter: 3,
      probeInterval: 1000,
      now: clock.now,
    })
    const states: string[] = []
    limiter.onStateChange((s) => states.push(s))
    const decisions = []
    for (let i = 0; i < 10; i++) decisions.push(await limiter.consume('k'))
    expect(decisions.every((d) => d.source === 'insurance')).toBe(true)
    expect(states).toEqual(['insurance'])
    expect(limiter.state).toBe('insurance')
    const s = limiter.stats()
    expect(s.notReady + s.timeouts).toBeGreaterThanOrEqual(3)
    expect(s.state).toBe('insurance')

    // The operator fixes it (here: the server takes the client's password); the next probe finds Redis again.
    const admin = new Redis(server.port, '127.0.0.1', { password: 'right' })
    await admin.config('SET', 'requirepass', 'wrong')
    admin.disconnect()
    await poll('the client to connect', async () => (redis.status === 'ready' ? true : undefined))
    clock.advance(1000)
    expect((await limiter.consume('k')).source).toBe('redis')
    expect(limiter.state).toBe('redis')
    expect(states).toEqual(['insurance', 'redis'])
    redis.disconnect()
  })

  it('a node-redis client that is closed counts as not ready', async () => {
    const client = createClient({ socket: { host: '127.0.0.1', port: server.port }, password: 'wrong' })
    const limiter = new RedisRateLimiter({
      redis: client,
      limit: 10,
      window: 60_000,
      keyPrefix: `${uniqueName('closed')}:`,
      openAfter: 2,
    })
    const states: string[] = []
    limiter.onStateChange((s) => states.push(s))
    const decisions = await Promise.all([1, 2, 3].map(() => limiter.consume('k')))
    expect(decisions.map((d) => d.source)).toEqual(['insurance', 'insurance', 'insurance'])
    // Two failures open the circuit: the third decision does not even look at the client.
    expect(limiter.stats()).toMatchObject({ notReady: 2, insurance: 3, state: 'insurance' })
    expect(states).toEqual(['insurance'])
  })
})

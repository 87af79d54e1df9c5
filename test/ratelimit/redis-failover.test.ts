import Redis from 'ioredis'
import { performance } from 'perf_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { RedisRateLimiter, type RateLimitDecision } from '../../lib/components/ratelimit/redis/redis-rate-limiter'
import { ManualClock } from '../helpers/manual-clock'
import { RedisServer, redisTarget } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

// These tests kill, restart and stop their own server, so they need the redis-server binary.
const target = redisTarget(true)
const TIMEOUT = 50
// The limiter checks its pending decisions every fifth of the timeout and gives each up one check before it.
const TICK = TIMEOUT / 5

/**
 * The decision comes within the timeout: no later than a plain timer of TIMEOUT started with it (plus one check of
 * the limiter), which runs late exactly when this event loop does, however busy the machine is.
 */
async function withinTimeout(call: Promise<RateLimitDecision>): Promise<RateLimitDecision> {
  const timer = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now()), TIMEOUT))
  const decision = await call
  const decidedAt = performance.now()
  expect(decidedAt).toBeLessThanOrEqual((await timer) + TICK)
  return decision
}

/** The decision is made without waiting for Redis or for a timer: it settles before the loop's next turn. */
async function atOnce(call: Promise<RateLimitDecision>): Promise<RateLimitDecision> {
  const nextTurn = new Promise<'next turn'>((resolve) => setImmediate(() => resolve('next turn')))
  const first = await Promise.race([call, nextTurn])
  expect(first).not.toBe('next turn')
  return call
}

const ready = (redis: Redis) => waitFor(() => redis.status === 'ready', { what: 'the Redis client ready' })

describe.skipIf(!target)('RedisRateLimiter when Redis fails', () => {
  let server: RedisServer
  let redis: Redis
  const clock = new ManualClock(1_000_000)

  beforeAll(async () => {
    server = await RedisServer.start(target!.binary as string)
    // Reconnect quickly, and fail queued commands fast: the limiter must not depend on either.
    redis = new Redis(server.url, { retryStrategy: () => 20, maxRetriesPerRequest: 1 })
    redis.on('error', () => undefined) // refused connections while the server is down are expected here
    await ready(redis)
  })

  afterAll(async () => {
    redis.disconnect()
    await server.stop()
  })

  function limiter(extra: Partial<ConstructorParameters<typeof RedisRateLimiter>[0]> = {}) {
    const l = new RedisRateLimiter({
      redis,
      limit: 100,
      window: 60_000,
      keyPrefix: `${uniqueName('failover')}:`,
      timeout: TIMEOUT,
      hosts: 4,
      openAfter: 2,
      probeInterval: 500,
      now: clock.now,
      ...extra,
    })
    const states: string[] = []
    l.onStateChange((s) => states.push(s))
    return { l, states }
  }

  /**
   * Decides until Redis decides (after a probe interval each time, so that every try may be a probe), and says how
   * many tries it took: a probe that Redis answers within the timeout brings decisions back to it, and on a busy
   * machine the first ones may not.
   */
  async function untilRedisDecides(l: RedisRateLimiter): Promise<{ decision: RateLimitDecision; tries: number }> {
    let tries = 0
    const decision = await waitFor(
      async () => {
        clock.advance(500)
        tries++
        const d = await l.consume('k')
        return d.source === 'redis' && d
      },
      { what: 'a decision by Redis' },
    )
    return { decision, tries }
  }

  it('a stopped (SIGSTOP) Redis: no decision waits longer than the timeout, then Redis is skipped until a probe answers', async () => {
    const { l, states } = limiter()
    expect((await l.consume('k')).source).toBe('redis')
    server.pause()
    try {
      // Decisions already on their way wait for the timeout, never longer.
      const slow = await Promise.all(Array.from({ length: 20 }, () => withinTimeout(l.consume('k'))))
      for (const d of slow) expect(d.source).toBe('insurance')
      expect(states).toEqual(['insurance'])
      expect(l.state).toBe('insurance')
      // Redis is now skipped: decisions come from insurance at once.
      expect((await atOnce(l.consume('k'))).source).toBe('insurance')
      // A probe is due after probeInterval; it times out too, and Redis stays skipped.
      clock.advance(500)
      expect((await withinTimeout(l.consume('k'))).source).toBe('insurance')
      await atOnce(l.consume('k'))
    } finally {
      server.resume()
    }
    // Redis answers again: a probe brings decisions back to it.
    await untilRedisDecides(l)
    expect(l.state).toBe('redis')
    expect(states).toEqual(['insurance', 'redis'])
    expect(l.stats().timeouts).toBeGreaterThanOrEqual(21)
  })

  it('a killed and restarted Redis: decisions fall back to insurance, then come back to Redis', async () => {
    const { l, states } = limiter()
    expect((await l.consume('k')).source).toBe('redis')
    await server.kill()
    for (let i = 0; i < 20; i++) expect((await withinTimeout(l.consume('k'))).source).toBe('insurance')
    // Once the client knows the connection is gone, decisions do not even wait for the timeout.
    await waitFor(() => redis.status !== 'ready', { what: 'the client to see the connection gone' })
    for (let i = 0; i < 10; i++) expect((await atOnce(l.consume('k'))).source).toBe('insurance')

    await server.launch()
    await ready(redis)
    const probe = await untilRedisDecides(l)
    expect(l.state).toBe('redis')
    // The restarted server lost its scripts (NOSCRIPT) and its keys: the count starts again, in Redis, at 99 after
    // one try (tries that timed out may have been counted there too).
    expect(probe.decision).toMatchObject({ allowed: true, source: 'redis' })
    expect(probe.decision.remaining).toBeLessThanOrEqual(99)
    expect(probe.decision.remaining).toBeGreaterThanOrEqual(100 - probe.tries)
    expect([[], ['insurance', 'redis']]).toContainEqual(states)
  })

  it('the default insurance gives each host its share of the limit (limit / hosts), per key', async () => {
    const { l } = limiter({ algorithm: 'sliding-window', limit: 100, hosts: 4 })
    server.pause()
    try {
      const decisions = await Promise.all(Array.from({ length: 40 }, () => l.consume('tenant')))
      expect(decisions.every((d) => d.source === 'insurance')).toBe(true)
      expect(decisions.filter((d) => d.allowed)).toHaveLength(25)
      expect((await l.consume('other tenant')).allowed).toBe(true)
    } finally {
      server.resume()
    }
  })
})

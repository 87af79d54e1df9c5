// The soak's load: every component, driven in this process. `step(n)` makes n rounds of calls; the HTTP leg (an
// httpGuard server and an undici client through undiciGuard) and the Redis leg (when a redis-server is available)
// run on their own timers. Everything shared uses names under `prefix`.
import http from 'node:http'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const b = Object.assign(
  {},
  ...['', '/entries/http', '/entries/undici', '/entries/redis'].map((entry) => require(`../../dist/cjs${entry}`)),
)

export function createLoad(prefix, redisUrl) {
  const s = (kind) => `${prefix}-${kind}`
  const bbr = new b.BbrLimiter({ shared: s('bbr'), queueDelay: false })
  const sre = new b.SreBreaker({ shared: s('sre'), minimumCalls: 50 })
  const circuit = new b.CircuitBreaker({ shared: s('cb'), minimumCalls: 50, failureRatio: 0.9, openDuration: 200 })
  const group = new b.BreakerGroup((key, shared) => new b.SreBreaker({ shared }), { shared: s('grp'), maxKeys: 64 })
  const topk = new b.HeavyKeeper({ shared: s('hk'), k: 50 })
  const cache = new b.HotKeyCache({ k: 50, capacity: 200, ttl: 50, fadeEvery: 1000, shared: s('cache') })
  const bucket = new b.TokenBucket({ rate: 50_000, shared: s('tb') })
  const window = new b.SlidingWindowLimiter({ limit: 50_000, window: 1000, shared: s('sw') })
  const keyed = new b.KeyedLimiter(() => new b.TokenBucket({ rate: 10, burst: 5 }), {
    maxKeys: 5000,
    idleTimeout: 2000,
  })
  const budget = new b.RetryBudget()
  const ring = new b.ConsistentHash(Array.from({ length: 40 }, (_, i) => `backend-${i}`))
  const held = []
  let i = 0
  let flips = 0

  function step(rounds) {
    for (let r = 0; r < rounds; r++, i++) {
      const token = bbr.tryAcquire(i & 3)
      if (token >= 0) held.push(token)
      if (held.length > 32) bbr.release(held.shift())
      if (sre.tryAcquire()) i % 10 ? sre.recordSuccess() : sre.recordFailure()
      if (circuit.tryAcquire()) i % 7 ? circuit.recordSuccess(1) : circuit.recordFailure(1)
      group.get(`route-${i % 100}`).tryAcquire() // 100 keys over 64 slots: keys come and go
      const key = `user-${Math.floor(Math.random() ** 3 * 10_000)}`
      topk.add(key)
      cache.addWithValue(key, { key })
      cache.get(key)
      bucket.tryAcquire()
      window.tryAcquire()
      keyed.tryAcquire(`client-${(i * 7919) % 20_000}`) // more clients than maxKeys: eviction all the time
      budget.recordRequest()
      if (i % 10 === 0) budget.tryAcquire()
      ring.get(key)
    }
    if (++flips % 500 === 0) {
      topk.list()
      bbr.stats()
      ring.set(Array.from({ length: 40 }, (_, k) => `backend-${(k + flips) % 60}`)) // membership churn
      b.subset(`client-${flips}`, ['a', 'b', 'c', 'd', 'e'], 2)
    }
  }

  const extras = startHttp(s)
  const redisLeg = redisUrl ? startRedis(redisUrl, prefix) : undefined

  async function close() {
    await extras.close()
    await redisLeg?.close()
    for (const t of held.splice(0)) bbr.release(t)
    for (const x of [bbr, sre, circuit, group, topk, cache, bucket, window, keyed]) x.close()
  }
  return { step, close }
}

/** A guarded HTTP server on loopback and a client through undiciGuard, 200 requests/s on keep-alive. */
function startHttp(s) {
  // undici 8 (the dev dependency `undici`) needs Node 22.19; before that, undici 7 (the alias `undici-v7`).
  const [major, minor] = process.versions.node.split('.').map(Number)
  const { Agent } = require(major > 22 || (major === 22 && minor >= 19) ? 'undici' : 'undici-v7')
  const listener = b.httpGuard((req, res) => res.end('ok'), { limiter: { shared: s('http'), queueDelay: false } })
  const server = http.createServer(listener)
  const guard = b.undiciGuard({ breaker: { minimumCalls: 20 } })
  const agent = new Agent({ connections: 4 }).compose(guard)
  let timer
  const listening = new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  listening.then(() => {
    const origin = `http://127.0.0.1:${server.address().port}`
    timer = setInterval(() => {
      for (let k = 0; k < 2; k++)
        agent.request({ origin, path: '/', method: 'GET' }).then(
          (r) => r.body.dump(),
          () => undefined,
        )
    }, 10)
  })
  return {
    async close() {
      clearInterval(timer)
      await listening
      await agent.close()
      guard.close()
      listener.guard.close()
      await new Promise((resolve) => server.close(resolve))
      server.closeAllConnections?.()
    },
  }
}

/** A RedisRateLimiter on a real server: 300 decisions/s over a few hundred keys. */
function startRedis(url, prefix) {
  const Redis = require('ioredis')
  const client = new Redis(url, { maxRetriesPerRequest: 1 })
  client.on('error', () => undefined)
  const limiter = new b.RedisRateLimiter({
    redis: client,
    limit: 100,
    window: 1000,
    keyPrefix: `${prefix}:`,
    timeout: 50,
  })
  let n = 0
  const timer = setInterval(() => {
    for (let k = 0; k < 3; k++) limiter.consume(`tenant-${n++ % 300}`).catch(() => undefined)
  }, 10)
  return {
    async close() {
      clearInterval(timer)
      limiter.close()
      await client.quit().catch(() => undefined)
    },
  }
}

// One key flooded at 10x its limit (100 per second, 1 000 decisions a second) for FLOOD_SECONDS (default 10): the
// Redis calls it costs per second, with and without local refusal, against rate-limiter-flexible's RateLimiterRedis
// with and without inMemoryBlockOnConsumed; and what each admitted against what its limit allows.
import { createRequire } from 'module'
import * as os from 'os'
import { performance } from 'perf_hooks'
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { writeTable } from './harness.mjs'
import { connect, costDelta, serverCost, startServer } from './lib/redis-bench.mjs'

const require = createRequire(import.meta.url)
const { RedisRateLimiter } = require('../dist/cjs/entries/redis')

const SECONDS = Number(process.env.FLOOD_SECONDS ?? 10)
const LIMIT = 100 // per second
const OFFERED = LIMIT * 10

// What each limit allows over a run whose decisions Redis made between `from` and `to` (ms, Redis' clock).
const perWindow = (from, to) => LIMIT * (Math.floor(to / 1000) - Math.floor(from / 1000) + 1)

const rlf = (inMemoryBlockOnConsumed) => ({
  name: `rate-limiter-flexible RateLimiterRedis${inMemoryBlockOnConsumed ? ', inMemoryBlockOnConsumed' : ''}`,
  // A fixed window of 1 s from the key's first decision: at most LIMIT in each.
  bound: (from, to) => LIMIT * Math.ceil((to - from) / 1000 + 1e-9),
  make: (redis, keyPrefix) => {
    const l = new RateLimiterRedis({
      storeClient: redis,
      points: LIMIT,
      duration: 1,
      keyPrefix,
      inMemoryBlockOnConsumed,
    })
    return {
      decide: (key) =>
        l.consume(key).then(
          () => true,
          (res) => {
            if (res instanceof Error) throw res
            return false
          },
        ),
      local: () => '',
    }
  },
})

const ours = (algorithm, localRefusal) => ({
  name: `RedisRateLimiter (${algorithm}), local refusal ${localRefusal ? 'on' : 'off'}`,
  // GCRA: a full bucket, then the rate; sliding window: at most LIMIT in each window aligned to Redis' clock.
  bound: algorithm === 'gcra' ? (from, to) => Math.floor(LIMIT + (LIMIT * (to - from)) / 1000) : perWindow,
  make: (redis, keyPrefix) => {
    const l = new RedisRateLimiter({ redis, limit: LIMIT, window: 1000, algorithm, keyPrefix, localRefusal })
    return {
      decide: (key) => l.consume(key).then((d) => d.allowed),
      local: () => String(l.stats().local),
      ready: () => l.ready(),
    }
  },
})

const contenders = [
  rlf(undefined),
  rlf(LIMIT),
  ours('gcra', false),
  ours('gcra', true),
  ours('sliding-window', false),
  ours('sliding-window', true),
]

/** OFFERED decisions a second on one key for SECONDS, from a 1 ms timer that catches up when it runs late. */
async function flood(decide) {
  let admitted = 0
  let offered = 0
  const pending = []
  const start = performance.now()
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const elapsed = performance.now() - start
      const due = Math.min(OFFERED * SECONDS, Math.floor((elapsed * OFFERED) / 1000))
      for (; offered < due; offered++) pending.push(decide('abuser').then((ok) => (admitted += ok ? 1 : 0)))
      if (elapsed >= SECONDS * 1000) {
        clearInterval(timer)
        resolve()
      }
    }, 1)
  })
  await Promise.all(pending)
  return { admitted, offered }
}

/** Redis' clock, ms. */
async function redisNow(admin) {
  const [seconds, micros] = await admin.time()
  return Number(seconds) * 1000 + Number(micros) / 1000
}

const server = await startServer()
const admin = await connect(server.url)
const loadBefore = os.loadavg()[0]
const rows = []
try {
  for (const c of contenders) {
    const redis = await connect(server.url)
    const limiter = c.make(redis, `flood-${process.pid}-${rows.length}:`)
    await limiter.ready?.()
    const before = await serverCost(admin)
    const from = await redisNow(admin)
    const { admitted, offered } = await flood(limiter.decide)
    const to = await redisNow(admin)
    const cost = costDelta(before, await serverCost(admin))
    redis.disconnect()
    rows.push([
      c.name,
      Math.round(offered / SECONDS).toLocaleString('en-US'),
      Math.round(cost.calls / SECONDS).toLocaleString('en-US'),
      limiter.local(),
      admitted.toLocaleString('en-US'),
      c.bound(from, to).toLocaleString('en-US'),
    ])
  }
} finally {
  admin.disconnect()
  server.stop()
}
const loadAfter = os.loadavg()[0]
console.log(
  `load average (1 min) before ${loadBefore.toFixed(2)}, after ${loadAfter.toFixed(2)} on ${os.cpus().length} cores`,
)
writeTable(
  'Redis rate limiters: a key flooded at 10x its limit',
  ['limiter', 'decisions/s', 'Redis calls/s', 'refused locally', 'admitted', 'the limit allows at most'],
  rows,
)

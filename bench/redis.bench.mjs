// The fleet tier: decisions per second and latency of RedisRateLimiter against rate-limiter-flexible's
// RateLimiterRedis on the same Redis, at 1, 64 and 256 decisions in flight. Uses REDIS_URL, or starts a private
// redis-server on a free loopback port (and stops it after). Every decision here is admitted (limits far above the
// load) over 10 000 keys, so both libraries take their normal path.
import { spawn } from 'child_process'
import { createRequire } from 'module'
import * as net from 'net'
import { performance } from 'perf_hooks'
import Redis from 'ioredis'
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { writeTable } from './harness.mjs'

const require = createRequire(import.meta.url)
const { RedisRateLimiter } = require('../dist/cjs')

// Contenders take turns in short rounds (the order rotating each round), so that load from elsewhere on a shared
// machine falls on all of them alike; throughput is the median round, latencies pool every round.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 1)
const CONCURRENCY = [1, 64, 256]
const KEYS = Array.from({ length: 10_000 }, (_, i) => `user-${i}`)

async function startServer() {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: () => undefined }
  const port = await new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const p = probe.address().port
      probe.close(() => resolve(p))
    })
  })
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  )
  const url = `redis://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 })
    probe.on('error', () => {}) // refused until the server is up: expected while probing
    const up = await probe.connect().then(
      () => true,
      () => false,
    )
    probe.disconnect()
    if (up) return { url, stop: () => child.kill('SIGKILL') }
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('redis-server did not start (install redis-server or set REDIS_URL)')
}

/** Keeps `concurrency` decisions in flight for `seconds`; adds each latency (ms) to `latencies`, returns decisions/s. */
async function run(decide, concurrency, seconds, latencies = []) {
  let next = 0
  let done = 0
  const end = performance.now() + seconds * 1000
  const worker = async () => {
    while (performance.now() < end) {
      const start = performance.now()
      await decide(KEYS[next++ % KEYS.length])
      latencies.push(performance.now() - start)
      done++
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  return done / ((performance.now() - started) / 1000)
}

function percentile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

const server = await startServer()
const contenders = [
  {
    name: 'rate-limiter-flexible RateLimiterRedis',
    make: (redis) => {
      const l = new RateLimiterRedis({ storeClient: redis, points: 1e9, duration: 60, keyPrefix: `rlf-${process.pid}` })
      return { decide: (key) => l.consume(key), check: () => undefined }
    },
  },
  ...['sliding-window', 'gcra'].map((algorithm) => ({
    name: `RedisRateLimiter (${algorithm})`,
    make: (redis) => {
      // A generous timeout: this measures the Redis path, and checks that no decision fell back.
      const l = new RedisRateLimiter({
        redis,
        limit: 1e9,
        window: 60_000,
        algorithm,
        timeout: 2000,
        keyPrefix: `bw-${process.pid}:`,
      })
      return {
        decide: (key) => l.consume(key),
        check: () => {
          const s = l.stats()
          if (s.insurance > 0) throw new Error(`${s.insurance} decisions went to insurance: the comparison is void`)
        },
      }
    },
  })),
]

const lines = []
try {
  for (const concurrency of CONCURRENCY) {
    const entries = []
    for (const c of contenders) {
      const redis = new Redis(server.url)
      await new Promise((r) => redis.once('ready', r))
      const limiter = c.make(redis)
      await run(limiter.decide, concurrency, 0.5) // warm-up (and loads the scripts)
      entries.push({ name: c.name, redis, limiter, rates: [], latencies: [] })
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < entries.length; i++) {
        const e = entries[(i + round) % entries.length]
        e.rates.push(await run(e.limiter.decide, concurrency, ROUND_SECONDS, e.latencies))
      }
    }
    let baseline
    for (const e of entries) {
      e.limiter.check()
      e.redis.disconnect()
      const rate = e.rates.sort((a, b) => a - b)[Math.floor(e.rates.length / 2)]
      const sorted = e.latencies.sort((a, b) => a - b)
      const r = { rate, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
      baseline ??= r
      lines.push([
        String(concurrency),
        e.name,
        Math.round(r.rate).toLocaleString('en-US'),
        r.p50.toFixed(3),
        r.p99.toFixed(3),
        `${(r.rate / baseline.rate).toFixed(2)}x`,
        `${(r.p99 / baseline.p99).toFixed(2)}x`,
      ])
    }
  }
} finally {
  server.stop()
}
writeTable(
  'Redis rate limiters: decisions per second and latency',
  ['in flight', 'limiter', 'decisions/s', 'p50 ms', 'p99 ms', 'x RLF throughput', 'x RLF p99'],
  lines,
)

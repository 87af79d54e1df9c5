// The fleet tier: decisions per second, latency and Redis CPU per decision of RedisRateLimiter (sliding window and
// GCRA) against rate-limiter-flexible's RateLimiterRedis, on the same Redis with the same client (ioredis, default
// options), at 64 and 256 decisions in flight, through 1 client and through 4 (4 limiters, each on its own
// connection, each serving a quarter of the decisions in flight). Then the same exactness for all: many concurrent
// decisions on a few keys must admit exactly the limit. Uses REDIS_URL, or starts a private redis-server (stopped
// after). Prints the load average: on a busy machine throughput is noisy and 'Redis script' time counts preemption.
import { createRequire } from 'module'
import * as os from 'os'
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { writeTable } from './harness.mjs'
import { closedLoop, connect, costDelta, median, percentile, serverCost, startServer } from './lib/redis-bench.mjs'

const require = createRequire(import.meta.url)
const { RedisRateLimiter } = require('../dist/cjs/entries/redis')

// Contenders take turns in short rounds (the order rotating each round), so that load from elsewhere on a shared
// machine falls on all of them alike; throughput is the median round, latencies and Redis costs pool every round.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 1)
const IN_FLIGHT = [64, 256]
const CLIENTS = [1, 4]
const KEYS = Array.from({ length: 10_000 }, (_, i) => `user-${i}`)

const contenders = [
  {
    name: 'rate-limiter-flexible RateLimiterRedis',
    make: (redis, prefix, limit, seconds) => {
      const l = new RateLimiterRedis({ storeClient: redis, points: limit, duration: seconds, keyPrefix: prefix })
      // It rejects a refused consume (as its callers must handle): count that as an answer.
      return {
        decide: (key) =>
          l.consume(key).then(
            () => true,
            (res) => {
              if (res instanceof Error) throw res
              return false
            },
          ),
        check: () => undefined,
      }
    },
  },
  ...['sliding-window', 'gcra'].map((algorithm) => ({
    name: `RedisRateLimiter (${algorithm})`,
    make: (redis, prefix, limit, seconds) => {
      // A generous timeout: this measures the Redis path, and checks below that no decision fell back.
      const l = new RedisRateLimiter({
        redis,
        limit,
        window: seconds * 1000,
        algorithm,
        timeout: 5000,
        keyPrefix: prefix,
      })
      return {
        decide: (key) => l.consume(key).then((d) => d.allowed),
        check: () => {
          const s = l.stats()
          if (s.insurance > 0) throw new Error(`${s.insurance} decisions went to insurance: the comparison is void`)
        },
        ready: () => l.ready(),
      }
    },
  })),
]

/** One contender on `clients` connections, each with its own limiter: worker i always decides through limiter i % clients, as each host of a fleet uses its own. */
async function field(url, contender, clients, prefix, limit, seconds) {
  const connections = await Promise.all(Array.from({ length: clients }, () => connect(url)))
  const limiters = connections.map((redis) => contender.make(redis, prefix, limit, seconds))
  await Promise.all(limiters.map((l) => l.ready?.()))
  return {
    decide: (key, worker) => limiters[worker % limiters.length].decide(key),
    check: () => limiters.forEach((l) => l.check()),
    close: () => connections.forEach((c) => c.disconnect()),
  }
}

const server = await startServer()
const admin = await connect(server.url)
const loadBefore = os.loadavg()[0]
const speed = []
const exactness = []
try {
  for (const clients of CLIENTS) {
    for (const inFlight of IN_FLIGHT) {
      const entries = []
      for (const c of contenders) {
        // Limits far above the load: every decision is admitted, so each library takes its normal path.
        const f = await field(server.url, c, clients, `bench-${process.pid}-${entries.length}:`, 1e9, 60)
        await closedLoop(f.decide, KEYS, inFlight, 0.5) // warm-up
        entries.push({
          name: c.name,
          f,
          rates: [],
          latencies: [],
          cost: { calls: 0, usec: 0, cpuUs: 0 },
          clientUs: 0,
          done: 0,
        })
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < entries.length; i++) {
          const e = entries[(i + round) % entries.length]
          const before = await serverCost(admin)
          const cpu = process.cpuUsage()
          const r = await closedLoop(e.f.decide, KEYS, inFlight, ROUND_SECONDS, e.latencies)
          const used = process.cpuUsage(cpu)
          const d = costDelta(before, await serverCost(admin))
          e.clientUs += used.user + used.system
          e.rates.push(r.rate)
          e.done += r.done
          for (const k of Object.keys(d)) e.cost[k] += d[k]
        }
      }
      let baseline
      for (const e of entries) {
        e.f.check()
        e.f.close()
        const rate = median(e.rates)
        const sorted = e.latencies.sort((a, b) => a - b)
        baseline ??= rate
        speed.push([
          String(clients),
          String(inFlight),
          e.name,
          Math.round(rate).toLocaleString('en-US'),
          `${(rate / baseline).toFixed(2)}x`,
          percentile(sorted, 0.5).toFixed(2),
          percentile(sorted, 0.99).toFixed(2),
          (e.cost.usec / e.done).toFixed(2),
          (e.cost.cpuUs / e.done).toFixed(2),
          (e.clientUs / e.done).toFixed(2),
          (e.done / e.cost.calls).toFixed(1),
        ])
      }
    }
  }

  // Exactness: 20 keys with a limit of 100 per hour (no refill within the run), 10 000 decisions at 256 in flight
  // through 4 clients.
  for (const c of contenders) {
    const f = await field(server.url, c, 4, `exact-${process.pid}-${exactness.length}:`, 100, 3600)
    const keys = Array.from({ length: 20 }, (_, i) => `tenant-${i}`)
    const admitted = new Map(keys.map((k) => [k, 0]))
    let next = 0
    const worker = async (_, index) => {
      while (next < 10_000) {
        const key = keys[next++ % keys.length]
        if (await f.decide(key, index)) admitted.set(key, admitted.get(key) + 1)
      }
    }
    await Promise.all(Array.from({ length: 256 }, worker))
    f.check()
    f.close()
    const counts = [...admitted.values()]
    exactness.push([c.name, String(Math.min(...counts)), String(Math.max(...counts)), '100'])
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
  'Redis rate limiters: decisions per second and Redis CPU per decision',
  [
    'clients',
    'in flight',
    'limiter',
    'decisions/s',
    'x RLF',
    'p50 ms',
    'p99 ms',
    'Redis script µs/decision',
    'Redis CPU µs/decision',
    'Node CPU µs/decision',
    'decisions per call',
  ],
  speed,
)
writeTable(
  'Redis rate limiters: exactness',
  [
    'limiter (20 keys, 10 000 decisions, 256 in flight, 4 clients)',
    'fewest admitted on a key',
    'most admitted on a key',
    'limit per key',
  ],
  exactness,
)

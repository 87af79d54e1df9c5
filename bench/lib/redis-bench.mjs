// Shared by the Redis benchmarks: a private redis-server, the server's own accounting of what each contender cost
// it (INFO commandstats and INFO cpu), and a closed-loop driver that keeps N decisions in flight.
import { spawn } from 'child_process'
import * as net from 'net'
import { performance } from 'perf_hooks'
import Redis from 'ioredis'

/** REDIS_URL, or a private redis-server on a free loopback port (stopped by stop()). */
export async function startServer() {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: () => undefined }
  const port = await new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const p = probe.address().port
      probe.close(() => resolve(p))
    })
  })
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  const child = spawn('redis-server', args, { stdio: 'ignore' })
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

export async function connect(url, options = {}) {
  const redis = new Redis(url, options)
  await new Promise((resolve) => redis.once('ready', resolve))
  return redis
}

/**
 * What the server has spent so far: script calls (EVALSHA + EVAL, whoever sent them), the µs it spent running them
 * (INFO commandstats: the script's own commands included), and its whole CPU time in µs (INFO cpu: parsing,
 * networking and replies too).
 */
export async function serverCost(admin) {
  const stats = await admin.info('commandstats')
  let calls = 0
  let usec = 0
  for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(match[1])
    usec += Number(match[2])
  }
  const cpu = await admin.info('cpu')
  const seconds = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)[1])
  return { calls, usec, cpuUs: (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6 }
}

export function costDelta(before, after) {
  return { calls: after.calls - before.calls, usec: after.usec - before.usec, cpuUs: after.cpuUs - before.cpuUs }
}

/**
 * Keeps `concurrency` decisions in flight for `seconds`, over `keys` in turn: `concurrency` workers, each calling
 * `decide(key, worker)` again as soon as its last decision is answered. Pushes each latency (ms) onto `latencies`.
 * Returns the decisions made and the decisions per second.
 */
export async function closedLoop(decide, keys, concurrency, seconds, latencies = []) {
  let next = 0
  let done = 0
  const end = performance.now() + seconds * 1000
  const worker = async (_, index) => {
    while (performance.now() < end) {
      const start = performance.now()
      await decide(keys[next++ % keys.length], index)
      latencies.push(performance.now() - start)
      done++
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { done, rate: done / ((performance.now() - started) / 1000) }
}

export function percentile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/** The machine's load average now: the numbers are noisy when it is well above the core count. */
export { loadavg } from 'os'

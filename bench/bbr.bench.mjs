// BbrLimiter per-request cost against the closest Node peers, in one run.
import { fork } from 'child_process'
import { createRequire } from 'module'
import { fileURLToPath } from 'url'
import { do_not_optimize, measure, peer } from './harness.mjs'

const require = createRequire(import.meta.url)
const { BbrLimiter } = require('../dist/cjs')
const { bulkhead } = require('cockatiel')
const { RateLimiterMemory } = require('rate-limiter-flexible')

// A child process can share the limiter with this one: `node bbr.bench.mjs --partner <name>`.
if (process.argv[2] === '--partner') {
  const limiter = new BbrLimiter({ shared: process.argv[3] })
  process.send('ready')
  const spin = () => {
    for (let i = 0; i < 100_000; i++) limiter.release(limiter.tryAcquire())
    setImmediate(spin)
  }
  spin()
} else {
  await main()
}

async function main() {
  const local = new BbrLimiter()
  // Shedding: every request sees load >= threshold and more in flight than the estimate allows.
  const shedding = new BbrLimiter({ cpuThreshold: 1, minInFlight: 10, queueDelay: false })
  for (let i = 0; i < 20; i++) shedding.tryAcquire()
  // Fair shedding: the same pair with a key (one HeavyKeeper add per admitted request), 64 tenants in turn.
  const fair = new BbrLimiter({ fairness: true })
  const tenants = Array.from({ length: 64 }, (_, i) => `tenant-${i}`)
  let turn = 0
  // A queue configured (maxWait) and nobody waiting: what the queue costs a request that is not refused.
  const queued = new BbrLimiter({ maxWait: 50 })
  const sharedName = `bench-bbr-${process.pid}`
  const shared = new BbrLimiter({ shared: sharedName })

  const cockatielBulkhead = bulkhead(1_000_000)
  const admittedLimiter = new RateLimiterMemory({ points: 1e12, duration: 1 })
  const rejectingLimiter = new RateLimiterMemory({ points: 1, duration: 1000 })
  await rejectingLimiter.consume('k').catch(() => {})

  // The floor: what any in-flight limiter costs in plain JS with a precise clock per request.
  let inFlight = 0
  let rtSum = 0
  const plainPair = () => {
    const start = performance.now()
    inFlight++
    rtSum += inFlight
    inFlight--
    rtSum += performance.now() - start
  }

  const cases = [
    { name: 'bulwark tryAcquire+release', fn: () => local.release(local.tryAcquire()), target: 60, baseline: true },
    {
      name: 'bulwark tryAcquire+release, no key, fairness on',
      fn: () => fair.release(fair.tryAcquire()),
      target: 60,
    },
    {
      name: 'bulwark tryAcquire(normal, key)+release, fairness on',
      fn: () => fair.release(fair.tryAcquire('normal', tenants[turn++ & 63])),
      target: 160,
    },
    {
      name: 'bulwark tryAcquire+release, maxWait set, queue empty',
      fn: () => queued.release(queued.tryAcquire()),
      target: 60,
    },
    { name: 'bulwark shed path (tryAcquire)', fn: () => do_not_optimize(shedding.tryAcquire()), target: 30 },
    { name: 'bulwark shared tryAcquire+release', fn: () => shared.release(shared.tryAcquire()), target: 60 },
    { name: 'plain JS counter + performance.now()', fn: plainPair },
    { name: `${peer('cockatiel')} bulkhead.execute`, fn: async () => cockatielBulkhead.execute(() => 1) },
    { name: `${peer('rate-limiter-flexible')} consume (admitted)`, fn: async () => admittedLimiter.consume('k') },
    {
      name: `${peer('rate-limiter-flexible')} consume (rejected)`,
      fn: async () => rejectingLimiter.consume('k').catch(() => 0),
    },
  ]
  await measure('BBR limiter: per-request cost', cases, { peers: [peer('cockatiel'), peer('rate-limiter-flexible')] })

  // Two processes on one shared limiter: the partner churns admit/release pairs while this process measures.
  const partner = fork(fileURLToPath(import.meta.url), ['--partner', sharedName], { stdio: 'inherit' })
  await new Promise((resolve) => partner.once('message', resolve))
  await measure('BBR limiter: 2 processes sharing one limiter', [
    {
      name: 'shared tryAcquire+release, partner process busy',
      fn: () => shared.release(shared.tryAcquire()),
      target: 60,
    },
  ])
  partner.kill()
  console.log(`(this machine has 2 cores; the partner process takes one of them)`)
  do_not_optimize(rtSum)
  shared.close()
  fair.close()
}

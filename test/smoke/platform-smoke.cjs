// A plain-Node smoke test of the native addon, for platforms where vitest cannot run (Windows under wine:
// scripts/cross/win64-tests.sh; docs/readme/install.md). It loads the package (PREBUILDS_ONLY=1 makes that the
// prebuilt binary), exercises each native component once with real threads, and exits 1 on the first failure.
// It also runs natively in the unit suite (test/install/platform-smoke.test.ts), so it cannot rot.
// Usage: node test/smoke/platform-smoke.cjs
'use strict'
const path = require('path')
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads')

const root = path.join(__dirname, '..', '..')
const b = require(path.join(root, 'dist', 'cjs'))

// Limits only stop a broken run; emulation is many times slower than a real machine.
const scale = Number(process.env.BULWARK_TIME_SCALE) || 1

function check(condition, what, seen) {
  if (!condition) throw new Error(`${what} (saw ${JSON.stringify(seen)})`)
}

async function waitFor(condition, what, timeoutMs) {
  const giveUp = Date.now() + timeoutMs * scale
  let last
  while (!(last = condition())) {
    if (Date.now() > giveUp) throw new Error(`${what} not reached within ${timeoutMs * scale} ms (last: ${last})`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

// ---- worker side: each worker opens the same shared components as the main thread.
// A fixed clock: each thread's coarse clock can lag another's by a sampler tick, which would make the bucket's
// content at its origin a fraction short of the burst in the lagging thread.
const bucketOptions = (name) => ({ rate: 0.001, burst: 100, shared: name, now: () => 0 })
const bbrOptions = (name) => ({ shared: name, signal: { load: () => 0 }, queueDelay: false, latency: false })

function runWorker({ task, name, gate }) {
  const go = new Int32Array(gate)
  if (task === 'take') {
    const bucket = new b.TokenBucket(bucketOptions(name))
    parentPort.postMessage('ready')
    Atomics.wait(go, 0, 0) // both workers start taking at the same moment
    let taken = 0
    for (let i = 0; i < 150; i++) if (bucket.tryAcquire()) taken++
    bucket.close()
    parentPort.postMessage({ taken })
  } else {
    // Holds 3 requests in flight and never gives them back: terminating the worker must.
    const limiter = new b.BbrLimiter(bbrOptions(name))
    const tokens = [limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]
    parentPort.postMessage({ holding: tokens.filter((t) => t >= 0).length })
    // Kept reachable: a limiter that is garbage collected detaches and gives its requests back (its region's
    // finalizer), which would end the hold before the main thread looks.
    setInterval(() => void limiter, 60_000) // stays alive until terminated
  }
}

// ---- main side
function startWorker(data) {
  const worker = new Worker(__filename, { workerData: data })
  const messages = []
  const waiters = []
  worker.on('message', (m) => {
    messages.push(m)
    waiters.splice(0).forEach((wake) => wake())
  })
  worker.on('error', (error) => messages.push({ error: String(error) }))
  const next = async (what) => {
    await waitFor(() => messages.length > 0, what, 30_000)
    const m = messages.shift()
    if (m.error) throw new Error(`worker failed: ${m.error}`)
    return m
  }
  return { worker, next }
}

const checks = {
  loads() {
    const file = require('node-gyp-build').path(root)
    const expected = `${process.platform}-${process.arch}`
    if (process.env.PREBUILDS_ONLY) check(file.includes(`prebuilds${path.sep}${expected}`), `loads ${expected}`, file)
    return path.relative(root, file)
  },

  bbrLimiter() {
    // Full load: once the requests in flight pass the limit (minInFlight, with nothing measured yet), the in-flight
    // rule sheds the next one.
    const limiter = new b.BbrLimiter({
      signal: { load: () => 1000 },
      minInFlight: 2,
      queueDelay: false,
      latency: false,
    })
    const tokens = []
    let result
    while ((result = limiter.tryAcquire()) >= 0 && tokens.length < 10) tokens.push(result)
    check(tokens.length === 3, '3 admitted (in flight may pass 2 by one)', tokens)
    check(result === b.Shed.inFlight, 'the fourth shed by the in-flight rule', b.shedReason(result))
    tokens.forEach((t) => limiter.release(t))
    check(limiter.inFlight === 0, 'none in flight after release', limiter.inFlight)
    limiter.close()
    return `3 admitted, the fourth shed: ${b.shedReason(result)}`
  },

  circuitBreaker() {
    let now = 0
    const breaker = new b.CircuitBreaker({
      strategy: 'errorCount',
      failureCount: 3,
      minimumCalls: 1,
      openDuration: 1000,
      now: () => now,
    })
    for (let i = 0; i < 3; i++) {
      check(breaker.tryAcquire(), 'a closed breaker admits', i)
      breaker.recordFailure()
    }
    check(!breaker.tryAcquire() && breaker.state === 'open', 'open after 3 failures', breaker.state)
    now += 1001
    check(breaker.tryAcquire(), 'a probe after openDuration', breaker.state)
    breaker.recordSuccess()
    check(breaker.state === 'closed', 'closed after the probe succeeded', breaker.state)
    breaker.close()
    return 'closed -> open -> half-open -> closed'
  },

  sreBreaker() {
    let r = 0
    const breaker = new b.SreBreaker({ minimumCalls: 10, now: () => 0, random: () => (r = (r + 0.37) % 1) })
    for (let i = 0; i < 50; i++) if (breaker.tryAcquire()) breaker.recordFailure()
    let rejected = 0
    for (let i = 0; i < 100; i++) if (!breaker.tryAcquire()) rejected++
    check(rejected > 50, 'rejects most calls after failures only', rejected)
    breaker.close()
    return `${rejected} of 100 rejected after 50 failures`
  },

  tokenBucket() {
    let now = 0
    const bucket = new b.TokenBucket({ rate: 10, burst: 10, now: () => now })
    let taken = 0
    for (let i = 0; i < 20; i++) if (bucket.tryAcquire()) taken++
    check(taken === 10, 'burst of 10', taken)
    now += 100
    check(bucket.tryAcquire() && !bucket.tryAcquire(), 'one token per 100 ms at rate 10', bucket.stats())
    bucket.close()
    return '10 of 20, then 1 after 100 ms'
  },

  heavyKeeper() {
    const keeper = new b.HeavyKeeper({ k: 3, seed: 1 })
    for (let i = 0; i < 1000; i++) keeper.add(i % 2 === 0 ? 'hot' : `cold-${i}`)
    const top = keeper.list()
    check(top[0] && top[0].key === 'hot' && top[0].count >= 400, 'the hot key on top', top)
    keeper.close()
    return `top: ${top[0].key} x${top[0].count}`
  },

  async sharedRegion() {
    const name = `smoke-${process.pid}-${Date.now()}`
    const bucket = new b.TokenBucket(bucketOptions(name))
    check(
      b.listRegions().includes(`token-bucket.${b.defaultNamespace()}.${name}`),
      'the region is listed',
      b.listRegions(),
    )
    const gate = new SharedArrayBuffer(4)
    const takers = [startWorker({ task: 'take', name, gate }), startWorker({ task: 'take', name, gate })]
    for (const t of takers) check((await t.next('worker ready')) === 'ready', 'worker ready', null)
    Atomics.store(new Int32Array(gate), 0, 1)
    Atomics.notify(new Int32Array(gate), 0)
    const taken = []
    for (const t of takers) taken.push((await t.next('worker done')).taken)
    check(taken[0] + taken[1] === 100, 'two threads share one burst of 100 exactly', taken)

    // In flight host-wide, and given back when the thread that held them ends.
    const limiter = new b.BbrLimiter(bbrOptions(name))
    const holder = startWorker({ task: 'hold', name, gate })
    check((await holder.next('holding')).holding === 3, 'the worker holds 3', null)
    check(limiter.inFlight === 3, 'its 3 in flight seen from here', limiter.inFlight)
    await holder.worker.terminate()
    await waitFor(() => limiter.inFlight === 0, 'in-flight given back after terminate', 5000)
    for (const t of takers) await t.worker.terminate()
    bucket.close()
    limiter.close()
    check(!b.listRegions().some((n) => n.endsWith(name)), 'no region left after the last close', b.listRegions())
    return `burst split ${taken.join(' + ')}, 3 in flight reclaimed after terminate`
  },

  async cpuSignal() {
    // The sampler thread keeps the coarse clock and the CPU figure fresh; busy work must show as load.
    const started = b.coarseNow()
    await waitFor(() => b.coarseNow() > started, 'the coarse clock advances', 2000)
    const until = Date.now() + 1000 * scale
    while (Date.now() < until && b.cpuUsage() === 0) for (let i = 0; i < 1e6; i++) Math.sqrt(i)
    const info = b.loadInfo()
    check(info.samplerRunning && info.samples > 0, 'the sampler runs', info)
    check(b.cpuUsage() > 0 && b.cpuUsage() <= 1000, 'CPU permille in (0, 1000]', b.cpuUsage())
    check(info.cores > 0, 'cores known', info.cores)
    const elu = b.eventLoopUtilization()
    check(elu >= 0 && elu <= 1000, 'event-loop utilization permille in [0, 1000]', elu)
    return `${info.source}, ${info.cores} cores, CPU ${b.cpuUsage().toFixed(0)}, loop ${elu.toFixed(0)} permille`
  },
}

async function main() {
  const started = Date.now()
  console.log(`platform smoke: ${process.platform}-${process.arch}, Node ${process.version}`)
  // BULWARK_SMOKE_ONLY: the checks to run, comma-separated (scripts/cross/other-runtimes.sh runs Bun without
  // sharedRegion).
  const only = process.env.BULWARK_SMOKE_ONLY?.split(',')
  const chosen = Object.entries(checks).filter(([name]) => !only || only.includes(name))
  for (const [name, run] of chosen) {
    const begun = Date.now()
    try {
      const detail = await run()
      console.log(`ok   ${name}: ${detail} (${Date.now() - begun} ms)`)
    } catch (error) {
      console.log(`FAIL ${name}: ${error.stack || error}`)
      process.exit(1)
    }
  }
  console.log(`platform smoke: all ${chosen.length} passed in ${Date.now() - started} ms`)
  process.exit(0)
}

if (isMainThread) {
  main()
} else {
  runWorker(workerData)
}

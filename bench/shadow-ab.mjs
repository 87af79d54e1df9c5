// Does shadow mode slow the enforcing paths? The same enforcing cases (admitted and refused, shared regions, shadow
// mode never on) timed in processes that alternate between two builds, say one of the branch before shadow mode and
// one after: each process times 12 rounds of 500 000 calls a case and reports each case's median ns per call.
//   node bench/shadow-ab.mjs <dist/cjs path> [<dist/cjs path>] [--processes N (4)]
import { spawnSync } from 'child_process'
import * as path from 'path'
import { fileURLToPath } from 'url'
import { saturatedBulkhead } from './lib/saturated-bulkhead.mjs'

const CALLS = 500_000
const ROUNDS = 12
const WARM_ROUNDS = 2

async function child(dist) {
  const { createRequire } = await import('module')
  const b = createRequire(import.meta.url)(dist)
  const name = (what) => `bench-shadow-ab-${what}-${process.pid}`
  const open = new b.TokenBucket({ rate: 1e12, burst: 1e12, shared: name('tb-open') })
  const shut = new b.TokenBucket({ rate: 1e-9, burst: 1, shared: name('tb-shut') })
  const wide = new b.SlidingWindowLimiter({ limit: 1e15, window: 1e9, shared: name('sw-wide') })
  const full = new b.SlidingWindowLimiter({ limit: 1, window: 1e9, shared: name('sw-full') })
  const limiter = new b.BbrLimiter({ shared: name('bbr') })
  const shedding = new b.BbrLimiter({ cpuThreshold: 1, minInFlight: 10, queueDelay: false, shared: name('bbr-shed') })
  const sre = new b.SreBreaker({ minimumCalls: 10, random: () => 0, shared: name('sre') })
  const circuit = new b.CircuitBreaker({ minimumCalls: 1, failureRatio: 0.5, shared: name('cb') })
  const open2 = new b.CircuitBreaker({ shared: name('cb-closed') })
  const bulkhead = new b.AdaptiveBulkhead({ shared: name('bh') })
  const saturated = saturatedBulkhead(b, name('bh-saturated'))
  const granting = new b.RetryBudget({ ratio: 1000, minPerSecond: 1e9, shared: name('rb-granting') })
  const spent = new b.RetryBudget({ ratio: 0, minPerSecond: 0, shared: name('rb-spent') })
  shut.tryAcquire()
  full.tryAcquire()
  for (let i = 0; i < 20; i++) shedding.tryAcquire()
  for (let i = 0; i < 20; i++) sre.recordFailure()
  circuit.recordFailure()
  let sink = 0
  const cases = {
    'TokenBucket admitted': () => (sink += open.tryAcquire() ? 1 : 0),
    'TokenBucket refused': () => (sink += shut.tryAcquire() ? 1 : 0),
    'SlidingWindowLimiter admitted': () => (sink += wide.tryAcquire() ? 1 : 0),
    'SlidingWindowLimiter refused': () => (sink += full.tryAcquire() ? 1 : 0),
    'BbrLimiter pair admitted': () => limiter.release(limiter.tryAcquire()),
    'BbrLimiter shed': () => (sink += shedding.tryAcquire()),
    'SreBreaker refused': () => (sink += sre.tryAcquire() ? 1 : 0),
    'CircuitBreaker admitted': () => (sink += open2.tryAcquire() ? 1 : 0),
    'CircuitBreaker refused': () => (sink += circuit.tryAcquire() ? 1 : 0),
    'AdaptiveBulkhead pair admitted': () => bulkhead.release(bulkhead.tryAcquire()),
    'AdaptiveBulkhead shed': () => (sink += saturated.tryAcquire()),
    'RetryBudget granted': () => (sink += granting.tryAcquire() ? 1 : 0),
    'RetryBudget refused': () => (sink += spent.tryAcquire() ? 1 : 0),
  }
  const rounds = Object.fromEntries(Object.keys(cases).map((k) => [k, []]))
  for (let r = 0; r < WARM_ROUNDS + ROUNDS; r++) {
    for (const [label, fn] of Object.entries(cases)) {
      const start = process.hrtime.bigint()
      for (let i = 0; i < CALLS; i++) fn()
      const ns = Number(process.hrtime.bigint() - start) / CALLS
      if (r >= WARM_ROUNDS) rounds[label].push(ns)
    }
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1]
  console.log(
    JSON.stringify({
      sink: sink > 0,
      cases: Object.fromEntries(Object.entries(rounds).map(([k, v]) => [k, median(v)])),
    }),
  )
}

function parent(args) {
  const at = args.indexOf('--processes')
  const processes = at >= 0 ? Number(args[at + 1]) : 4
  const dists = args.filter((a, i) => a !== '--processes' && i !== at + 1).map((p) => path.resolve(process.cwd(), p))
  if (dists.length === 0) dists.push(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/cjs'))
  const runs = new Map(dists.map((d) => [d, []]))
  for (let i = 0; i < processes; i++) {
    for (const dist of dists) {
      const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', dist], { encoding: 'utf8' })
      if (run.status !== 0) throw new Error(`${dist}: ${run.stderr}`)
      runs.get(dist).push(JSON.parse(run.stdout).cases)
    }
  }
  const labels = Object.keys([...runs.values()][0][0])
  const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1]
  console.log(
    `Enforcing paths, ns per call, median of ${processes} processes (each its median of ${ROUNDS} rounds), ${process.version}`,
  )
  console.log(['case', ...dists.map((d, i) => `build ${i + 1}`), ...(dists.length === 2 ? ['2 / 1'] : [])].join(' | '))
  for (const label of labels) {
    const per = dists.map((d) => median(runs.get(d).map((r) => r[label])))
    const ratio = per.length === 2 ? [`${(per[1] / per[0]).toFixed(2)}x`] : []
    console.log([label, ...per.map((v) => v.toFixed(1)), ...ratio].join(' | '))
  }
  dists.forEach((d, i) => console.log(`build ${i + 1}: ${d}`))
}

if (process.argv[2] === '--child') await child(process.argv[3])
else parent(process.argv.slice(2))

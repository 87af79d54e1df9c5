// Every hot path against the best Node peer, side by side in one run, each pair calling the same function, with the
// promise floor measured in the same run. Cases run in interleaved rounds timed in CPU time (bench/lib/interleaved.mjs),
// so a busy machine shifts every case alike: read the ratios.
//
//   node bench/peers.bench.mjs            writes bench/results/peers-<node major>.md
//
// Goals (issue 15; docs/guide/benchmarks.md shows the last results against them): every synchronous path at least 3x cheaper than the best peer; every async execute
// at most the `.then` floor plus its own synchronous pair.
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import { createRequire } from 'module'
import * as os from 'os'
import { fileURLToPath } from 'url'
import { interleaved } from './lib/interleaved.mjs'
import { writeTable } from './harness.mjs'
import { zipfSampler } from '../test/hotkeys/zipf-stream.mjs'

const require = createRequire(import.meta.url)
const { BbrLimiter, CircuitBreaker, SreBreaker, AdaptiveBulkhead, TokenBucket, HeavyKeeper } = require('../dist/cjs')
const { bulkhead, circuitBreaker, handleAll, ConsecutiveBreaker, SamplingBreaker } = require('cockatiel')
const Opossum = require('opossum')
const { RateLimiterMemory } = require('rate-limiter-flexible')
const version = (name) => require(`${name}/package.json`).version
const peers = { cockatiel: version('cockatiel'), opossum: version('opossum'), rlf: version('rate-limiter-flexible') }

// The guarded work, the same on both sides: a synchronous function and an async one.
let sink = 0
const work = () => ++sink
const asyncWork = async () => ++sink
const onOk = (v) => v
const onErr = (e) => {
  throw e
}

// Default options (the latency rule on), except a queueing-delay target the benchmark's own loop never reaches:
// the rule runs on every call but does not shed the admitted path being measured.
// The default signal ('max') reads this thread's event-loop utilization, and the benchmark keeps its own loop busy: it
// reads over the CPU threshold (800) after the first rounds (990 or so), so `bbr` and `bbrShared` are measured on the
// path a saturated loop takes (in flight < 2: admitted without asking the rules), `bbrFn` on the path under it. The
// note under the table gives the load they read.
const admitting = { queueDelay: { target: 60_000 } }
const bbr = new BbrLimiter(admitting)
const bbrFn = new BbrLimiter({ ...admitting, signal: () => 0 })
const bbrShared = new BbrLimiter({ ...admitting, shared: `bench-peers-${process.pid}` })
const cb = new CircuitBreaker()
const sre = new SreBreaker()
const adaptive = new AdaptiveBulkhead()
const bucket = new TokenBucket({ rate: 1e12, burst: 1e12 })

const cockatielBulkhead = bulkhead(1e9)
const cockatielBreaker = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) })
const cockatielSampling = circuitBreaker(handleAll, {
  halfOpenAfter: 10_000,
  breaker: new SamplingBreaker({ threshold: 0.5, duration: 10_000 }),
})
const opossum = new Opossum(work, { timeout: false })
const opossumAsync = new Opossum(asyncWork, { timeout: false })
const rlf = new RateLimiterMemory({ points: 1e12, duration: 1 })

// Hot keys: Zipf streams of 16-byte keys, each event a key string from a table (as a gateway's key is one string),
// counted by HeavyKeeper and by an exact Map; both are first fed the whole stream once, so that each is measured in
// its steady state (the Map then holds every key the stream has). Two tables: a million keys (most events miss the
// CPU caches: the key strings and the Map's entries are cold) and 1 000 keys (everything stays in cache).
const STREAM = Number(process.env.PEERS_STREAM ?? 2_000_000)
const keyTable = (distinct) => Array.from({ length: distinct }, (_, rank) => `key:${String(rank).padStart(12, '0')}`)
const coldKeys = keyTable(1_000_000)
const warmKeys = keyTable(1_000)
function hotKeyCases(s, keys, label) {
  const next = zipfSampler({ s, v: 1, n: keys.length, seed: 20250912 })
  const ranks = new Uint32Array(STREAM)
  for (let i = 0; i < STREAM; i++) ranks[i] = next()
  const hk = new HeavyKeeper({ k: 100, width: 4096, seed: 20250912 })
  const map = new Map()
  let h = 0
  let m = 0
  for (let i = 0; i < STREAM; i++) {
    const key = keys[ranks[i]]
    hk.add(key)
    map.set(key, (map.get(key) ?? 0) + 1)
  }
  const suffix = `Zipf ${s.toFixed(1)}, ${label}`
  return [
    { name: `HeavyKeeper.add, ${suffix}`, fn: () => hk.add(keys[ranks[h++ % STREAM]]) },
    {
      name: `exact Map count, ${suffix}`,
      fn: () => {
        const key = keys[ranks[m++ % STREAM]]
        map.set(key, (map.get(key) ?? 0) + 1)
      },
    },
  ]
}
const HOT_KEY_SETS = [
  'Zipf 1.0, 1 000 000 keys',
  'Zipf 1.2, 1 000 000 keys',
  'Zipf 1.0, 1 000 keys',
  'Zipf 1.2, 1 000 keys',
]

// Each case gets its own pair function, compiled from its own source: one shared helper would make its call sites
// see every component, which no caller's handler does. The source differs per case (a comment naming it) because V8
// caches what `new Function` compiles by its source text: the same text twice gives closures that share one
// feedback vector and one optimised code, so every later pair's call sites would see every limiter's class.
const compiled = (label, params, body) => new Function(...params, `// ${label}\n${body}`)
const pair = (label, limiter) =>
  compiled(
    label,
    ['limiter', 'work'],
    'return () => { const t = limiter.tryAcquire(); if (t >= 0) { work(); limiter.release(t) } }',
  )(limiter, work)
const breakerPair = (label, breaker) =>
  compiled(
    label,
    ['breaker', 'work'],
    'return () => { if (breaker.tryAcquire()) { work(); breaker.recordSuccess() } }',
  )(breaker, work)

const cases = [
  // Floors.
  { name: 'floor: await asyncWork()', fn: asyncWork },
  { name: 'floor: asyncWork().then(onOk, onErr)', fn: () => asyncWork().then(onOk, onErr) },
  {
    name: 'floor: async try/await/finally wrapper',
    fn: async () => {
      try {
        return await asyncWork()
      } finally {
        work()
      }
    },
  },
  // Synchronous pairs.
  { name: 'BbrLimiter tryAcquire+release', fn: pair('bbr', bbr) },
  { name: 'BbrLimiter tryAcquire+release, signal a function', fn: pair('bbrFn', bbrFn) },
  { name: 'BbrLimiter tryAcquire+release, shared', fn: pair('bbrShared', bbrShared) },
  { name: 'AdaptiveBulkhead tryAcquire+release', fn: pair('adaptive', adaptive) },
  { name: 'CircuitBreaker tryAcquire+recordSuccess', fn: breakerPair('cb', cb) },
  { name: 'SreBreaker tryAcquire+recordSuccess', fn: breakerPair('sre', sre) },
  { name: 'TokenBucket tryAcquire', fn: () => bucket.tryAcquire() && work() },
  // Async wrappers, ours.
  { name: 'BbrLimiter.execute(asyncWork)', fn: () => bbr.execute(asyncWork) },
  { name: 'BbrLimiter.execute(work)', fn: () => bbr.execute(work) },
  { name: 'AdaptiveBulkhead.execute(asyncWork)', fn: () => adaptive.execute(asyncWork) },
  { name: 'CircuitBreaker.execute(asyncWork)', fn: () => cb.execute(asyncWork) },
  { name: 'CircuitBreaker.execute(work)', fn: () => cb.execute(work) },
  { name: 'SreBreaker.execute(asyncWork)', fn: () => sre.execute(asyncWork) },
  // Peers.
  { name: `cockatiel ${peers.cockatiel} bulkhead.execute(work)`, fn: () => cockatielBulkhead.execute(work) },
  { name: `cockatiel ${peers.cockatiel} bulkhead.execute(asyncWork)`, fn: () => cockatielBulkhead.execute(asyncWork) },
  { name: `cockatiel ${peers.cockatiel} circuitBreaker.execute(work)`, fn: () => cockatielBreaker.execute(work) },
  {
    name: `cockatiel ${peers.cockatiel} circuitBreaker.execute(asyncWork)`,
    fn: () => cockatielBreaker.execute(asyncWork),
  },
  { name: `cockatiel ${peers.cockatiel} SamplingBreaker execute(work)`, fn: () => cockatielSampling.execute(work) },
  { name: `opossum ${peers.opossum} fire (work)`, fn: () => opossum.fire() },
  { name: `opossum ${peers.opossum} fire (asyncWork)`, fn: () => opossumAsync.fire() },
  { name: `rate-limiter-flexible ${peers.rlf} RateLimiterMemory.consume`, fn: () => rlf.consume('k') },
  ...hotKeyCases(1.0, coldKeys, '1 000 000 keys'),
  ...hotKeyCases(1.2, coldKeys, '1 000 000 keys'),
  ...hotKeyCases(1.0, warmKeys, '1 000 keys'),
  ...hotKeyCases(1.2, warmKeys, '1 000 keys'),
]

const only = process.env.PEERS_ONLY ? new RegExp(process.env.PEERS_ONLY) : undefined
const chosen = only ? cases.filter((c) => only.test(c.name) || c.name.startsWith('floor')) : cases
const load = os.loadavg()[0]
const ROUNDS = Number(process.env.PEERS_ROUNDS ?? 15)
const ROUND_MS = Number(process.env.PEERS_ROUND_MS ?? 20)
const results = await interleaved(chosen, { rounds: ROUNDS, roundMs: ROUND_MS })

// The BbrLimiter pairs' goal rows come from processes of their own, each holding one limiter beside cockatiel's
// bulkhead (bench/lib/bbr-pair-process.mjs), PEERS_PROCESSES of them per variant, the variants in turn. A row is the
// median over its processes, its ratio the median of each process's own ratio. Here, the three limiters share
// BbrLimiter's compiled methods, whose feedback then sees every signal's branch, which an application running one
// limiter never does; and the pair's path is over V8's inlining budget, so which call it leaves out is drawn per
// process: one process's figure is one draw. The in-process figures stay in the every-case table, and the execute
// rows are paired with them.
const PROCESSES = Number(process.env.PEERS_PROCESSES ?? 5)
const pairProcess = fileURLToPath(new URL('./lib/bbr-pair-process.mjs', import.meta.url))
const OWN_PROCESS_PAIRS = [
  ['BbrLimiter tryAcquire+release', 'default'],
  ['BbrLimiter tryAcquire+release, signal a function', 'function'],
  ['BbrLimiter tryAcquire+release, shared', 'shared'],
].filter(([name]) => !only || only.test(name))
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]
const perProcess = new Map(OWN_PROCESS_PAIRS.map(([name]) => [name, []]))
for (let i = 0; i < PROCESSES; i++) {
  for (const [name, variant] of OWN_PROCESS_PAIRS) {
    const run = spawnSync(process.execPath, [pairProcess, variant, String(ROUNDS), String(ROUND_MS)], {
      encoding: 'utf8',
    })
    if (run.status !== 0) throw new Error(`bbr-pair-process.mjs ${variant}: ${run.stderr}`)
    perProcess.get(name).push(JSON.parse(run.stdout))
  }
}
const ownProcess = new Map(
  [...perProcess].map(([name, runs]) => [
    name,
    {
      ns: median(runs.map((r) => r.ours)),
      peerNs: median(runs.map((r) => r.peer)),
      ratio: median(runs.map((r) => r.peer / r.ours)),
      load: median(runs.map((r) => r.load)),
    },
  ]),
)
const loadAfter = os.loadavg()[0]
const ns = (prefix) => {
  const hit = [...results.entries()].find(([name]) => name.startsWith(prefix))
  return hit ? hit[1].ns : NaN
}
const fmt = (v) => (Number.isNaN(v) ? '-' : v.toFixed(1))
const roundsOf = (prefix) => [...results.entries()].find(([name]) => name.startsWith(prefix))?.[1].rounds
/**
 * Median over rounds of `ours - floor - pair`, each round's three figures taken within a fraction of a second of
 * each other: machine noise that moves a whole round cancels, where comparing three separate medians let the
 * verdict flip between back-to-back quiet runs (2026-12-02: wrappers 20-40 % apart run to run).
 */
function pairedExcess(name, pairName) {
  const ours = roundsOf(name)
  const floor = roundsOf('floor: asyncWork().then')
  const pair = roundsOf(pairName)
  if (!ours || !floor || !pair) return NaN
  const excess = ours.map((v, r) => v - floor[r] - pair[r]).sort((a, b) => a - b)
  return excess[excess.length >> 1]
}

// Each of our paths, its best peer (the cheapest doing the same job) and the goal.
const thenFloor = ns('floor: asyncWork().then')
const cheapest = (...prefixes) => {
  let best = { name: '-', ns: NaN }
  for (const p of prefixes) {
    const v = ns(p)
    if (!Number.isNaN(v) && !(v >= best.ns)) best = { name: p, ns: v }
  }
  return best
}
const bulkheadPeer = () => cheapest(`cockatiel ${peers.cockatiel} bulkhead.execute(work)`)
const breakerPeer = () =>
  cheapest(
    `cockatiel ${peers.cockatiel} circuitBreaker.execute(work)`,
    `cockatiel ${peers.cockatiel} SamplingBreaker`,
    `opossum ${peers.opossum} fire (work)`,
  )
const asyncBulkheadPeer = () => cheapest(`cockatiel ${peers.cockatiel} bulkhead.execute(asyncWork)`)
const asyncBreakerPeer = () =>
  cheapest(
    `cockatiel ${peers.cockatiel} circuitBreaker.execute(asyncWork)`,
    `opossum ${peers.opossum} fire (asyncWork)`,
  )

const syncRows = [
  ['BbrLimiter tryAcquire+release', bulkheadPeer],
  ['BbrLimiter tryAcquire+release, signal a function', bulkheadPeer],
  ['BbrLimiter tryAcquire+release, shared', bulkheadPeer],
  ['AdaptiveBulkhead tryAcquire+release', bulkheadPeer],
  ['CircuitBreaker tryAcquire+recordSuccess', breakerPeer],
  ['SreBreaker tryAcquire+recordSuccess', breakerPeer],
  ['TokenBucket tryAcquire', () => cheapest(`rate-limiter-flexible ${peers.rlf}`)],
]
const asyncRows = [
  ['BbrLimiter.execute(asyncWork)', 'BbrLimiter tryAcquire+release', asyncBulkheadPeer],
  ['AdaptiveBulkhead.execute(asyncWork)', 'AdaptiveBulkhead tryAcquire+release', asyncBulkheadPeer],
  ['CircuitBreaker.execute(asyncWork)', 'CircuitBreaker tryAcquire+recordSuccess', asyncBreakerPeer],
  ['SreBreaker.execute(asyncWork)', 'SreBreaker tryAcquire+recordSuccess', asyncBreakerPeer],
]

const lines = []
let missed = 0
for (const set of HOT_KEY_SETS) {
  const ours = ns(`HeavyKeeper.add, ${set}`)
  const map = ns(`exact Map count, ${set}`)
  if (Number.isNaN(ours)) continue
  const ok = ours <= 100 && ours <= 1.25 * map
  if (!ok) missed++
  lines.push([
    `HeavyKeeper.add, ${set}`,
    fmt(ours),
    `exact Map count, ${set}`,
    fmt(map),
    `${(map / ours).toFixed(2)}x`,
    `<= 100 ns and <= 1.25x the Map: ${ok ? 'met' : 'MISSED'}`,
  ])
}
for (const [name, peerOf] of syncRows) {
  const own = ownProcess.get(name)
  if (own !== undefined) {
    const ok = own.ratio >= 3
    if (!ok) missed++
    const peerName = `cockatiel ${peers.cockatiel} bulkhead.execute(work), in the same processes`
    lines.push([
      `${name} (${PROCESSES} processes of its own)`,
      fmt(own.ns),
      peerName,
      fmt(own.peerNs),
      `${own.ratio.toFixed(1)}x`,
      `>= 3x: ${ok ? 'met' : 'MISSED'}`,
    ])
    continue
  }
  const ours = ns(name)
  if (Number.isNaN(ours)) continue
  const peer = peerOf()
  const ratio = peer.ns / ours
  const ok = ratio >= 3
  if (!ok) missed++
  lines.push([name, fmt(ours), peer.name, fmt(peer.ns), `${ratio.toFixed(1)}x`, `>= 3x: ${ok ? 'met' : 'MISSED'}`])
}
for (const [name, pairName, peerOf] of asyncRows) {
  const ours = ns(name)
  if (Number.isNaN(ours)) continue
  const peer = peerOf()
  const budget = thenFloor + ns(pairName)
  const excess = pairedExcess(name, pairName)
  const ok = excess <= 0
  if (!ok) missed++
  lines.push([
    name,
    fmt(ours),
    peer.name,
    fmt(peer.ns),
    `${(peer.ns / ours).toFixed(1)}x`,
    `<= floor + pair ${fmt(budget)}, paired per round ${excess > 0 ? '+' : ''}${fmt(excess)}: ${ok ? 'met' : 'MISSED'}`,
  ])
}

const major = process.versions.node.split('.')[0]
const title = `Peers side by side on Node ${major}`
writeTable(title, ['path', 'ns', 'best peer', 'peer ns', 'peer / ours', 'goal'], lines)
const all = [...results.entries()].map(([name, r]) => [name, fmt(r.ns), fmt(r.min), fmt(r.max)])
writeTable(`${title}: every case`, ['case', 'median ns', 'min', 'max'], all)
const busy =
  Math.max(load, loadAfter) >= os.cpus().length / 2 ? ' A busy machine (others worked on it): read the ratios.' : ''
const ownLoad = ownProcess.get('BbrLimiter tryAcquire+release')?.load
const note = `CPU-time medians of ${ROUNDS} interleaved rounds; the BbrLimiter pairs' rows: medians over ${PROCESSES} processes of their own per variant, each holding one limiter beside cockatiel's bulkhead (their ratio the median of each process's ratio; the in-process figures are in the every-case table). Load average ${load.toFixed(1)} before, ${loadAfter.toFixed(1)} after, on ${os.cpus().length} cores.${busy} The default-signal BbrLimiter read a load of ${bbr.stats().load.toFixed(0)} permille at the end (threshold 800)${ownLoad === undefined ? '' : `, ${ownLoad.toFixed(0)} in its own processes (median)`}.`
console.log(note)
fs.appendFileSync(new URL(`./results/peers-side-by-side-on-node-${major}.md`, import.meta.url), `\n${note}\n`)
console.log(`Goals missed: ${missed}`)
if (process.env.PEERS_JSON) fs.writeFileSync(process.env.PEERS_JSON, JSON.stringify(Object.fromEntries(results)))
for (const c of [bbr, bbrFn, bbrShared, cb, sre, adaptive, bucket]) c.close()
opossum.shutdown()
opossumAsync.shutdown()

// One contender of bench/keyed.bench.mjs in a process of its own (its memory is then its own to measure): `role`
// names it, the JSON argument sizes it. Every request's key is a fresh string, made before its batch is timed, as a
// request brings one; a batch's time over its size is one sample, and the median of the samples is reported (a busy
// machine preempts a batch now and then: the median does not move for it). Reports by IPC.
import { createRequire } from 'module'
import * as fs from 'fs'

const require = createRequire(import.meta.url)
const bulwark = require('../../dist/cjs')

const BATCH = 1000
const RATE = 50
const BURST = 100
const job = JSON.parse(process.argv[3] ?? '{}')

/** The key of client i: 20-odd characters, as an IP-and-route or an API key would be. */
const keyOf = (i) => `c${((i * 2654435761) >>> 0).toString(36)}.${(i % 977).toString(36)}:api/v1`
/** A fresh copy of a key string (a request's bytes become a new string; this is not timed). */
const fresh = (key) => Buffer.from(key, 'latin1').toString('latin1')

let coarse = 0
const clock = () => coarse

const median = (samples) => samples.sort((a, b) => a - b)[samples.length >> 1]

/** ns per decision over keys [from, to) in `order`, one sample a batch, added to `samples`; `decide` may be async. */
async function pass(decide, from, to, order, isAsync, samples = []) {
  const batch = new Array(BATCH)
  const count = to - from
  for (let start = 0; start < count; start += BATCH) {
    const n = Math.min(BATCH, count - start)
    for (let j = 0; j < n; j++) batch[j] = fresh(keyOf(from + ((order * (start + j)) % count)))
    coarse += 1
    const t0 = process.hrtime.bigint()
    if (isAsync) for (let j = 0; j < n; j++) await decide(batch[j])
    else for (let j = 0; j < n; j++) decide(batch[j])
    samples.push(Number(process.hrtime.bigint() - t0) / n)
  }
  return samples
}

function heap() {
  globalThis.gc?.()
  globalThis.gc?.()
  const m = process.memoryUsage()
  return m.heapUsed + m.external // external includes the ArrayBuffers
}

/** The contenders, each a decision for one key with 50 per second and bursts of 100 (or 100 per 2 s window). */
async function contender(name, keys) {
  if (name === 'table') {
    const keyed = new bulwark.KeyedLimiter({ rate: RATE, burst: BURST, maxKeys: keys, now: clock })
    return { decide: (key) => keyed.tryAcquire(key) }
  }
  if (name === 'factory') {
    const keyed = new bulwark.KeyedLimiter(() => new bulwark.TokenBucket({ rate: RATE, burst: BURST, now: clock }), {
      maxKeys: keys,
      now: clock,
    })
    return { decide: (key) => keyed.tryAcquire(key) }
  }
  if (name === 'map') {
    // An exact Map of small objects, GCRA: what an application would write.
    const map = new Map()
    const T = 1000 / RATE
    const tau = BURST * T
    return {
      decide(key) {
        const e = map.get(key)
        if (e === undefined) {
          map.set(key, { tat: coarse + T })
          return true
        }
        const next = (e.tat > coarse ? e.tat : coarse) + T
        if (next - coarse > tau) return false
        e.tat = next
        return true
      },
    }
  }
  if (name === 'rlf') {
    const { RateLimiterMemory } = require('rate-limiter-flexible')
    const limiter = new RateLimiterMemory({ points: BURST, duration: 2 })
    return { isAsync: true, decide: (key) => limiter.consume(key).then(yes, no) }
  }
  if (name === 'express') {
    const { MemoryStore } = await import('express-rate-limit')
    const store = new MemoryStore()
    store.init({ windowMs: 2000 })
    return { isAsync: true, decide: (key) => store.increment(key) }
  }
  if (name === 'hitlimit') {
    const { createHitLimit } = await import('@joint-ops/hitlimit/node')
    const limiter = createHitLimit({ limit: BURST, window: '2s' })
    const request = { socket: { remoteAddress: '' } }
    return {
      decide(key) {
        request.socket.remoteAddress = key
        return limiter.check(request).allowed
      },
    }
  }
  throw new Error(`unknown contender ${name}`)
}
const yes = () => true
const no = () => false

/**
 * New keys (each one's first request), then known keys in other orders (`rounds` passes); memory per key after the
 * first pass, keys included.
 */
async function local({ name, keys, rounds = 2 }) {
  const before = heap()
  const c = await contender(name, keys)
  const newKey = median(await pass(c.decide, 0, keys, 1, c.isAsync))
  const bytes = (heap() - before) / keys
  const known = []
  for (let r = 0; r < rounds; r++) await pass(c.decide, 0, keys, [7919, 104729, 1299709][r % 3], c.isAsync, known)
  return { newKey, known: median(known), bytes }
}

/** The mappings of this process whose path names `needle` (a region's file). */
function mappings(needle) {
  if (process.platform !== 'linux') return -1
  return fs
    .readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.includes(needle)).length
}

/** One of the writers sharing a table: waits at the start line, inserts its quarter, then decides on known keys. */
async function shared({ region, gate, writers, index, keys }) {
  const keyed = new bulwark.KeyedLimiter({ rate: RATE, burst: BURST, maxKeys: keys, shared: region, now: clock })
  const layout = new bulwark.RegionLayout('keyed-bench-gate', 16).describe('gate=2')
  const line = new bulwark.AtomicCounter(bulwark.SharedRegion.open(gate, layout), layout.cell(0, true))
  const wait = (n) => {
    line.add(1)
    while (line.load() < n) {}
  }
  const quarter = Math.floor(keys / writers)
  const from = index * quarter
  const decide = (key) => keyed.tryAcquire(key)
  wait(writers)
  const newKey = median(await pass(decide, from, from + quarter, 1, false))
  wait(2 * writers)
  const known = median(await pass(decide, from, from + quarter, 7919, false))
  return { newKey, known, mappings: mappings(region) }
}

/** Burst 100 on one hot key: `attempts` tries after the start line, with the clock stopped. */
function hot({ region, gate, writers, attempts }) {
  const keyed = new bulwark.KeyedLimiter({ rate: RATE, burst: BURST, maxKeys: 1000, shared: region, now: () => 0 })
  const layout = new bulwark.RegionLayout('keyed-bench-gate', 16).describe('gate=2')
  const line = new bulwark.AtomicCounter(bulwark.SharedRegion.open(gate, layout), layout.cell(0, true))
  line.add(1)
  while (line.load() < writers) {}
  let admitted = 0
  for (let i = 0; i < attempts; i++) if (keyed.tryAcquire('hot')) admitted++
  return { admitted, contended: keyed.stats().table.contended }
}

/** 10 million fresh keys through a table of a million, one request each, the clock 1 ms per 1 000 keys; a greedy key asks every 1 000. */
function churn({ keys, total }) {
  const keyed = new bulwark.KeyedLimiter({ rate: RATE, burst: BURST, maxKeys: keys, now: clock })
  let greedy = 0
  const rss = []
  for (let i = 0; i < total; i++) {
    keyed.tryAcquire(keyOf(keys + i))
    if (i % 1000 === 0) {
      coarse += 1
      for (let r = 0; r < 10; r++) if (keyed.tryAcquire('greedy')) greedy++
    }
    if (i % (total / 10) === 0) rss.push(process.memoryUsage().rss)
  }
  rss.push(process.memoryUsage().rss)
  return { rss, greedy, allowed: BURST + (RATE * coarse) / 1000, size: keyed.size, stats: keyed.stats().table }
}

const roles = { local, shared, hot, churn }
const result = await roles[process.argv[2]](job)
process.send(result, () => process.exit(0))

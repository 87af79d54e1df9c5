// Keyed limits at a gateway's scale (docs/rules/keyed-table.md): KeyedLimiter's table form against the per-key
// limiters Node gateways use, side by side in one run, each contender in a process of its own so that its memory is
// its own: a million keys in one process, a thousand (everything in cache), a million shared by 4 processes writing
// at once, one hot key across 4 processes, and 10 million fresh keys through a table of a million. Every request's
// key is a fresh string made before its batch is timed; each figure is a median over batches of 1 000 decisions.
// BENCH_KEYS (default 1 000 000) scales the runs down for a smoke test.
import { fork } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import { createRequire } from 'module'
import { fileURLToPath } from 'url'
import { peer, writeTable } from './harness.mjs'

const require = createRequire(import.meta.url)
const { listRegions } = require('../dist/cjs')
const { regionLocation } = require('../dist-internal/foundation/regions/regions.js')
const dir = path.dirname(fileURLToPath(import.meta.url))
const member = path.join(dir, 'lib', 'keyed-member.mjs')
const KEYS = Number(process.env.BENCH_KEYS ?? 1_000_000)
const FACTORY_KEYS = Math.min(KEYS, 100_000) // its ~2 KB a key makes a million 2 GB
const peers = [peer('rate-limiter-flexible'), peer('express-rate-limit'), peer('@joint-ops/hitlimit')]

function run(script, args) {
  return new Promise((resolve, reject) => {
    const child = fork(script, args, { execArgv: ['--expose-gc'], stdio: ['inherit', 'inherit', 'inherit', 'ipc'] })
    child.once('message', resolve)
    child.once('error', reject)
    child.once('exit', (code) => code !== 0 && reject(new Error(`${path.basename(script)} ${args[0]} exited ${code}`)))
  })
}
const role = (name, job) => run(member, [name, JSON.stringify(job)])
const ns = (v) => (v >= 1000 ? `${(v / 1000).toFixed(2)} µs` : `${v.toFixed(0)} ns`)
const goal = (value, limit) => `${value <= limit ? 'met' : 'MISSED'} (<= ${limit})`

const CONTENDERS = [
  ['table', 'KeyedLimiter, table form'],
  ['map', 'an exact Map (GCRA, small objects)'],
  ['factory', 'KeyedLimiter, factory form (TokenBucket a key)'],
  ['rlf', 'rate-limiter-flexible RateLimiterMemory'],
  ['express', 'express-rate-limit MemoryStore'],
  ['hitlimit', '@joint-ops/hitlimit (memory)'],
]

async function oneProcess(keys, rounds, title, columns = 'all') {
  const results = {}
  for (const [name] of CONTENDERS) {
    const n = name === 'factory' ? Math.min(keys, FACTORY_KEYS) : keys
    results[name] = { ...(await role('local', { name, keys: n, rounds })), keys: n }
  }
  const map = results.map
  const lines = CONTENDERS.map(([name, label]) => {
    const r = results[name]
    const line = [
      label + (r.keys !== keys ? ` (${r.keys.toLocaleString('en-US')} keys)` : ''),
      ns(r.known),
      `${(r.known / map.known).toFixed(2)}x`,
    ]
    return columns === 'all' ? [...line, ns(r.newKey), `${r.bytes.toFixed(0)} B`] : line
  })
  const header = ['contender', 'known key', 'known x Map']
  if (columns === 'all') header.push('new key', 'memory a key (keys included)')
  writeTable(title, header, lines, { peers })
  return results
}

async function shared(keys) {
  const region = `bench-keyed-${process.pid}`
  const gate = `bench-keyed-gate-${process.pid}`
  const writers = await Promise.all(
    [0, 1, 2, 3].map((index) => role('shared', { region, gate, writers: 4, index, keys })),
  )
  const files = listRegions().filter((r) => r.endsWith(`.${region}`))
  const bytes = files.reduce((sum, r) => sum + fs.statSync(regionLocation(r)).size, 0)
  const cluster = await run(path.join(dir, 'lib', 'rlf-cluster.mjs'), [String(Math.min(keys, 20_000))])
  const median = (values) => values.sort((a, b) => a - b)[values.length >> 1]
  const newKey = median(writers.map((w) => w.newKey))
  const known = median(writers.map((w) => w.known))
  const mappings = Math.max(...writers.map((w) => w.mappings))
  writeTable(
    `Keyed limits shared by 4 processes, ${keys.toLocaleString('en-US')} keys`,
    ['contender', 'new key', 'known key', 'region files', 'mappings a process', 'shared memory a key'],
    [
      [
        'KeyedLimiter, table form, `shared` (4 writers at once)',
        `${ns(newKey)} ${goal(newKey, 500)}`,
        `${ns(known)} ${goal(known, 200)}`,
        `${files.length} ${goal(files.length, 4)}`,
        `${mappings} ${goal(mappings, 8)}`,
        `${(bytes / keys).toFixed(1)} B ${goal(bytes / keys, 128)}`,
      ],
      [
        'rate-limiter-flexible RateLimiterCluster (1 worker, its master over IPC)',
        ns(cluster.newKey),
        ns(cluster.known),
      ],
    ],
    { peers },
  )
}

async function hotKey() {
  const region = `bench-keyed-hot-${process.pid}`
  const gate = `bench-keyed-hot-gate-${process.pid}`
  const results = await Promise.all([0, 1, 2, 3].map(() => role('hot', { region, gate, writers: 4, attempts: 1000 })))
  const admitted = results.reduce((s, r) => s + r.admitted, 0)
  const contended = results.reduce((s, r) => s + r.contended, 0)
  writeTable(
    'One hot key shared by 4 processes, burst 100',
    ['attempts', 'admitted', 'refused as contended', 'goal'],
    [
      [
        '4 x 1 000',
        String(admitted),
        String(contended),
        admitted === 100 ? 'met (exactly 100)' : 'MISSED (exactly 100)',
      ],
    ],
  )
}

async function churn(keys) {
  const total = keys * 10
  const r = await role('churn', { keys, total })
  const first = r.rss[1]
  const grew = Math.max(...r.rss.slice(1)) - first
  writeTable(
    `${total.toLocaleString('en-US')} fresh keys through a table of ${keys.toLocaleString('en-US')}`,
    ['RSS after 10 % / 100 %', 'growth after 10 %', 'greedy key admitted / allowed', 'slots reused', 'goal'],
    [
      [
        `${(first / 2 ** 20).toFixed(0)} / ${(r.rss.at(-1) / 2 ** 20).toFixed(0)} MiB`,
        `${(grew / 2 ** 20).toFixed(1)} MiB`,
        `${r.greedy} / ${Math.floor(r.allowed)}`,
        r.stats.reused.toLocaleString('en-US'),
        `${grew < 8 * 2 ** 20 ? 'flat' : 'NOT FLAT'}; ${r.greedy <= r.allowed + 1 ? 'greedy key still refused' : 'GREEDY KEY REFRESHED'}`,
      ],
    ],
  )
}

const only = process.env.BENCH_ONLY // one section: million, thousand, shared, hot, churn
const want = (section) => only === undefined || only === section
if (want('million')) {
  const million = await oneProcess(KEYS, 2, `Keyed limits in one process, ${KEYS.toLocaleString('en-US')} keys`)
  const t = million.table
  const vsMap = t.known / million.map.known
  console.log(
    `Goals: memory ${goal(t.bytes, 64)} B a key; known key ${goal(t.known, 150)} ns and ${goal(vsMap, 0.5)} x Map; new key ${goal(t.newKey, 300)} ns`,
  )
}
if (want('thousand')) {
  const thousand = await oneProcess(1000, 300, 'Keyed limits in one process, 1 000 keys (in cache)', 'known')
  console.log(`Goal: 1 000 keys, known key ${goal(thousand.table.known / thousand.map.known, 1.5)} x Map`)
}
if (want('shared')) await shared(KEYS)
if (want('hot')) await hotKey()
if (want('churn')) await churn(KEYS)

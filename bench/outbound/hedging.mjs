// Hedging (issue 35): an origin whose calls take 10 ms, 1 % of them 10x longer (100 ms), called by 8 concurrent
// callers through undici: p50/p99 and calls sent without hedging, and with a Hedger at p95 within a 5 % budget
// (a hedge aborts the loser through its signal).
//
//   node bench/outbound/hedging.mjs [--calls 4000]
import * as http from 'http'
import { createRequire } from 'module'
import { performance } from 'perf_hooks'
import { Agent, request } from 'undici-v7'
import { machine, writeTable } from '../harness.mjs'

const require = createRequire(import.meta.url)
const { Hedger, RetryBudget } = require('../../dist/cjs/index.js')
const { undiciGuard } = require('../../dist/cjs/entries/undici.js')
const args = process.argv.slice(2)
const CALLS = args.includes('--calls') ? Number(args[args.indexOf('--calls') + 1]) : 4000
const CONCURRENCY = 8
let seed = 7
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31

let received = 0
const server = http.createServer((req, res) => {
  received++
  const slow = random() < 0.01
  const timer = setTimeout(() => res.end('ok'), slow ? 100 : 10)
  res.on('close', () => clearTimeout(timer))
})
await new Promise((r) => server.listen(0, '127.0.0.1', r))
const url = `http://127.0.0.1:${server.address().port}/item`
const dispatcher = new Agent({ connections: 64 })

async function run(call) {
  const latencies = []
  let next = 0
  const loop = async () => {
    while (next++ < CALLS) {
      const start = performance.now()
      await call()
      latencies.push(performance.now() - start)
    }
  }
  received = 0
  seed = 7 // every run draws the same latencies (46 slow in the first 4 000 draws), so that runs compare alike
  await Promise.all(Array.from({ length: CONCURRENCY }, loop))
  latencies.sort((a, b) => a - b)
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)]
  return { p50: q(0.5), p99: q(0.99), sent: received }
}

const once = (signal) =>
  request(url, { dispatcher, signal }).then(
    (res) => res.body.text(),
    (error) => {
      if (!signal?.aborted) throw error
    },
  )
await run(() => once()) // warm the connections
const plain = await run(() => once())
const hedger = new Hedger({ percentile: 0.95, budget: 0.05 })
await run(() => hedger.run((signal) => once(signal))) // learns the latencies
const hedged = await run(() => hedger.run((signal) => once(signal)))
// The same inside undiciGuard: its retry budget at 5 % is the hedging budget.
const budget = new RetryBudget({ ratio: 0.05, minPerSecond: 0 })
const guard = undiciGuard({ hedging: true, budget, bulkheads: false, attempts: 1 })
const guarded = new Agent({ connections: 64 }).compose(guard)
const viaGuard = () => request(url, { dispatcher: guarded }).then((res) => res.body.text())
await run(viaGuard) // learns the latencies
const guardHedged = await run(viaGuard)
server.close()
await dispatcher.close()
await guarded.close()

const row = (name, r) => [
  name,
  r.p50.toFixed(1),
  r.p99.toFixed(1),
  String(r.sent),
  `${((100 * (r.sent - CALLS)) / CALLS).toFixed(1)} %`,
]
writeTable(
  'Hedging: an origin with a slow tail (1 % of calls 10x slower)',
  ['calls', 'p50 ms', 'p99 ms', 'calls sent', 'extra calls'],
  [
    row('no hedging', plain),
    row('Hedger p95, 5 % budget', hedged),
    row('undiciGuard hedging, 5 % budget', guardHedged),
    [
      'p99 ratio (Hedger, guard)',
      '',
      `${(plain.p99 / hedged.p99).toFixed(2)}x, ${(plain.p99 / guardHedged.p99).toFixed(2)}x`,
    ],
  ],
  { note: `${CALLS} calls, ${CONCURRENCY} concurrent callers, undici 7. ${machine()}` },
)

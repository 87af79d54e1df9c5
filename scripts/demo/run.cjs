#!/usr/bin/env node
// npm start: bulwark's main job on an embedded default. A node:cluster of HTTP workers (a product page: a lookup
// and a downstream call per request) is driven past its capacity by an open-loop load generator, once with
// bulwark (a shared BbrLimiter with priorities, an SreBreaker in front of a downstream that fails for a while, a
// HotKeyCache in front of the slow lookup) and once without, and the two are compared. No external service.
//   node scripts/demo/run.cjs [--seconds 60] [--workers 2] [--load 3] [--json]
'use strict'
const { preciseNow } = require('../../dist/cjs')
const { runClosedLoop, runOpenLoop } = require('../../bench/lib/open-loop.cjs')
const { ClusterHost } = require('./cluster-host.cjs')
const { LiveView } = require('./live-view.cjs')
const { summarizeRun } = require('./summary.cjs')
const { zipfKeys } = require('./zipf.cjs')

const SLO_MS = 500
const DRAIN_SECONDS = 1
const KEYS = 10_000

function parseArgs(argv) {
  const args = { seconds: 60, workers: 2, load: 3, json: false }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    if (flag === '--json') args.json = true
    else if (flag === '--seconds' || flag === '--workers' || flag === '--load') args[flag.slice(2)] = Number(argv[++i])
    else throw new Error(`unknown argument ${flag}`)
  }
  if (!(args.seconds >= 10)) throw new Error('--seconds must be at least 10')
  if (!(Number.isInteger(args.workers) && args.workers >= 1 && args.workers <= 64))
    throw new Error('--workers must be 1-64')
  if (!(args.load > 0 && args.load <= 20)) throw new Error('--load must be in (0, 20]')
  return args
}

/**
 * One run: `warm` seconds of ordinary traffic (80 % of capacity), then a surge at `rate` for `seconds`, during whose
 * middle third the downstream fails. The surge is summarised from `settle` seconds in (its first moments are the
 * transition, as in bench/overload).
 */
async function drive(host, view, { protect, capacity, rate, warm, settle, seconds }) {
  const key = zipfKeys(KEYS, 1.1)
  const startedAt = preciseNow()
  const surgeAt = startedAt + warm * 1000
  const failFrom = surgeAt + 0.35 * seconds * 1000
  const failTo = surgeAt + 0.65 * seconds * 1000
  await host.setMode(protect, failFrom, failTo)
  view?.start({ protect, rate, warm, seconds, startedAt, surgeAt, failFrom, failTo })
  const totalsBefore = host.totals()
  const run = await runOpenLoop({
    port: host.port,
    schedule: [
      { rate: 0.8 * capacity, seconds: warm },
      { rate, seconds },
    ],
    // Every tenth request is a checkout, which the workers class as critical (the generator marks it so too).
    path: (i) => `${i % 10 === 0 ? '/checkout' : '/item'}/item-${key()}`,
    criticalEvery: 10,
    drainSeconds: DRAIN_SECONDS,
  })
  await host.refresh()
  view?.stop()
  const summary = summarizeRun(run, {
    fromMs: (warm + settle) * 1000,
    sloMs: SLO_MS,
    gaveUpAtMs: (warm + seconds + DRAIN_SECONDS) * 1000,
  })
  const t = host.totals()
  const lookups = t.lookups - totalsBefore.lookups
  return { ...summary, cacheHitShare: lookups ? (t.cacheHits - totalsBefore.cacheHits) / lookups : 0 }
}

function report(args, result) {
  const { capacity, offeredPerSecond: rate, withBulwark, without } = result
  const n = (x) => Math.round(x).toLocaleString('en-US')
  const pct = (x) => `${(100 * x).toFixed(1)} %`
  const ms = (r) => `${n(r.p50Ms)} / ${n(r.p99Ms)} ms${r.unanswered ? ` (${n(r.unanswered)} never answered)` : ''}`
  const rows = [
    ['', 'with bulwark', 'without'],
    ['offered', `${n(rate)} req/s`, `${n(rate)} req/s`],
    [
      `goodput (200 within ${SLO_MS} ms)`,
      `${n(withBulwark.goodputPerSecond)} req/s`,
      `${n(without.goodputPerSecond)} req/s`,
    ],
    ['latency p50 / p99 (answered)', ms(withBulwark), ms(without)],
    ['refused at once (503)', pct(withBulwark.refusedShare), pct(without.refusedShare)],
    ['failed (502)', pct(withBulwark.failedShare), pct(without.failedShare)],
    ['lookups served from the hot-key cache', pct(withBulwark.cacheHitShare), '-'],
  ]
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  const lines = rows.map((r) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]))
      .join('   ')
      .trimEnd(),
  )
  console.log(
    `\nCapacity measured without protection: ${n(capacity)} req/s; offered ${args.load}x that, ${args.workers} workers.`,
  )
  console.log(`Measured from ${result.measuredFromSecond} s into the surge to its end:\n`)
  console.log(lines.join('\n'))
  const p99 = without.p99Ms / Math.max(withBulwark.p99Ms, 1)
  console.log(
    `\nWith bulwark the answered requests' p99 is ${p99 >= 1 ? `${p99.toFixed(1)}x lower` : 'not lower (!)'}, and goodput is ${n(withBulwark.goodputPerSecond)} vs ${n(without.goodputPerSecond)} req/s.`,
  )
}

async function main() {
  const args = parseArgs(process.argv.slice(2))
  const long = args.seconds >= 30
  const calibrate = long ? 3 : 1
  const warm = long ? 3 : 1
  const settle = long ? 2 : 1
  const seconds = (args.seconds - 2 * calibrate) / 2 - warm - DRAIN_SECONDS
  const host = new ClusterHost(args.workers, `demo-${process.pid}`)
  const log = (text) => args.json || console.log(text)
  await host.start()
  try {
    await host.setMode(false)
    log(`bulwark demo: ${args.workers} workers on 127.0.0.1:${host.port}; measuring their capacity...`)
    await runClosedLoop({ port: host.port, path: '/item/item-1', concurrency: 32, seconds: calibrate }) // JIT warm-up
    const capacity = await runClosedLoop({ port: host.port, path: '/item/item-1', concurrency: 32, seconds: calibrate })
    const rate = args.load * capacity
    const view = args.json ? undefined : new LiveView(host, process.stdout)
    log(
      `Capacity ${Math.round(capacity)} req/s. Each run: ${warm} s of ordinary traffic, then ${seconds.toFixed(0)} s at ${args.load}x capacity; first with bulwark, then without.\n`,
    )
    const phases = { capacity, rate, warm, settle, seconds }
    const withBulwark = await drive(host, view, { protect: true, ...phases })
    const without = await drive(host, view, { protect: false, ...phases })
    const result = {
      name: host.name,
      seconds: args.seconds,
      workers: args.workers,
      load: args.load,
      capacity,
      offeredPerSecond: rate,
      sloMs: SLO_MS,
      measuredFromSecond: settle,
      withBulwark,
      without,
    }
    if (args.json) console.log(JSON.stringify(result))
    else report(args, result)
  } finally {
    await host.stop()
  }
}

main().catch((error) => {
  console.error(`bulwark demo: ${error.message}`)
  process.exit(1)
})

// The upstream's capacity halves in the middle of an overload (a deploy that loses half the slots, or a noisy
// neighbour that doubles the service time). A gateway with httpGuard's defaults is driven at 3x the upstream's
// first capacity; CHANGE_AT seconds into the overload the upstream changes, and the run goes on as long again. The
// gateway's latency rule is sampled every 100 ms. Follow time: from the change to the first moment from which the
// next 2 s, and the rest of the run, give at least 90 % of the new capacity as goodput (the nominal ${NOMINAL / 2} req/s, or what the upstream measured it could serve after the change if less: on a busy machine its timers fire late) with an admitted p99 within
// 150 ms.
// Writes bench/results/overload-capacity-change.{md,json,svg}.
import { createRequire } from 'module'
import * as os from 'os'
import { machine } from '../../harness.mjs'
import { getJson } from '../lib/processes.mjs'
import { watchUpstream } from '../lib/upstream-account.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'
import { timelineChart } from '../lib/timeline-chart.mjs'
import { startPair } from './upstream.mjs'

const require = createRequire(import.meta.url)
const { summarize, timeline } = require('../../lib/open-loop.cjs')
const { runLeanLoad } = require('../../lib/lean-load.cjs')

const NOMINAL = 400 // 8 at a time, 20 ms each (the upstream's defaults)
const WARM_SECONDS = 3
const CHANGE_AT = Number(process.env.CHANGE_AT ?? 10) // seconds into the overload
const LOAD = 3
const SLO_MS = 500
const BIN_MS = 250
const WINDOW_MS = 2000
const CHANGES = [
  { name: 'slots halved (8 to 4)', query: 'concurrency=4', color: '#3b7dd8' },
  { name: 'service time doubled (20 to 40 ms)', query: 'serviceMs=40', color: '#d08c1f' },
]

/**
 * Seconds from `changeMs` until the first moment from which both the next WINDOW_MS and the rest of the run meet
 * the goodput and p99 targets (Infinity: never).
 */
function followTime(run, changeMs, endMs, capacity) {
  const meets = (from, to) => {
    const s = summarize(run, from, to, SLO_MS)
    return s.goodputPerSecond >= 0.9 * capacity && s.p99 <= 150
  }
  for (let t = changeMs; t + WINDOW_MS <= endMs; t += BIN_MS) {
    if (meets(t, t + WINDOW_MS) && meets(t, endMs)) return (t - changeMs) / 1000
  }
  return Infinity
}

async function runChange(change) {
  const pair = await startPair({ MODE: 'bulwark' })
  const overloadSeconds = 2 * CHANGE_AT
  const schedule = [
    { rate: 0.5 * NOMINAL, seconds: WARM_SECONDS },
    { rate: LOAD * NOMINAL, seconds: overloadSeconds },
  ]
  const changeMs = (WARM_SECONDS + CHANGE_AT) * 1000
  const samples = []
  const started = performance.now()
  const sampler = setInterval(async () => {
    const t = performance.now() - started
    const latency = (await getJson(pair.gateway.port, '/__stats')).inbound?.latency
    samples.push({ t, ...latency })
  }, 100)
  const changer = setTimeout(() => getJson(pair.upstream.port, `/__set?${change.query}`), changeMs)
  const endMs = (WARM_SECONDS + overloadSeconds) * 1000
  // What the upstream can serve after the change on this machine (its timers fire late when it is busy).
  const account = watchUpstream(pair.upstream.port, changeMs + 500, endMs)
  const run = await runLeanLoad({ port: pair.gateway.port, schedule, criticalEvery: 10, drainSeconds: 3 })
  clearInterval(sampler)
  clearTimeout(changer)
  const upstream = await account.result()
  await pair.stop()
  const before = summarize(run, changeMs - 5000, changeMs, SLO_MS)
  const after = summarize(run, changeMs + 3000, endMs, SLO_MS)
  const bins = timeline(run, 0, endMs, BIN_MS, SLO_MS)
  return {
    change: change.name,
    color: change.color,
    before,
    after,
    upstream,
    follow: followTime(run, changeMs, endMs, Math.min(NOMINAL / 2, upstream.capacity)),
    unanswered: summarize(run, 0, endMs, SLO_MS).unanswered,
    capped: run.generator.capped,
    bins: bins.map((b, i) => ({
      t: (i * BIN_MS) / 1000,
      goodput: b.goodputPerSecond,
      p99: b.p99,
      shed: b.shedRate,
    })),
    samples,
  }
}

export async function run() {
  const loadAtStart = os.loadavg()[0]
  console.log(`Machine: ${machine()}`)
  const results = []
  for (const change of CHANGES) {
    process.stdout.write(`${change.name}... `)
    const r = await runChange(change)
    results.push(r)
    console.log(`follows in ${fmt(r.follow, 2)} s`)
  }
  const changeT = WARM_SECONDS + CHANGE_AT
  const lines = [
    "### Overload, I/O-bound: the upstream's capacity halves mid-run",
    '',
    `${machineLine(loadAtStart)}. The upstream serves 8 requests at a time, 20 ms each (${NOMINAL} req/s nominal); the gateway (httpGuard, defaults) is driven at ${LOAD}x that (${LOAD * NOMINAL} req/s) after ${WARM_SECONDS} s at 0.5x; ${CHANGE_AT} s into the overload the upstream's capacity halves (${NOMINAL / 2} req/s). Before: the 5 s before the change; after: from 3 s after it to the end. Follows within: from the change until the first moment from which the next 2 s, and the rest of the run, give at least 90 % of the new capacity as goodput (answered 200 within ${SLO_MS} ms) with an admitted p99 within 150 ms. New capacity: the nominal ${NOMINAL / 2} req/s, or what the upstream measured it could serve after the change if less (on a busy machine its timers fire late).`,
    '',
    ...table(
      [
        'the change',
        'goodput/s before',
        'p99 ms before',
        'goodput/s after',
        'new capacity/s measured',
        'goodput % of new capacity',
        'p99 ms after',
        'follows within (s)',
        'unanswered',
      ],
      results.map((r) => [
        r.change,
        fmt(r.before.goodputPerSecond),
        fmt(r.before.p99, 0, 'timeout'),
        fmt(r.after.goodputPerSecond),
        fmt(r.upstream.capacity),
        fmt((100 * r.after.goodputPerSecond) / Math.min(NOMINAL / 2, r.upstream.capacity)),
        fmt(r.after.p99, 0, 'timeout'),
        fmt(r.follow, 2),
        String(r.unanswered),
      ]),
    ),
    '',
    ...goalsTable(
      'goal (bulwark httpGuard, defaults)',
      results.flatMap((r) => [
        [`${r.change}: follows within 2 s`, r.follow <= 2, `${fmt(r.follow, 2)} s`],
        [`${r.change}: nothing times out`, r.unanswered === 0, `${r.unanswered} unanswered`],
      ]),
    ),
  ]
  const capped = results.filter((r) => r.capped)
  if (capped.length > 0) {
    lines.push('', `The generator fell behind: ${capped.map((r) => `${r.change}: ${r.capped}`).join('; ')}.`)
  }
  const seconds = (ms) => ms / 1000
  const chart = timelineChart({
    tMax: WARM_SECONDS + 2 * CHANGE_AT,
    markers: [{ t: changeT, label: 'the capacity halves' }],
    legend: results.map((r) => ({ name: r.change, color: r.color })),
    note: `${machine()}; goodput and p99 per ${BIN_MS} ms; the limit (solid) and the learned base response time (dashed, right) every 100 ms`,
    panels: [
      {
        title: 'Goodput (2xx within 500 ms)',
        yLabel: 'requests / s',
        yMax: 1.2 * NOMINAL,
        series: results.map((r) => ({ name: r.change, color: r.color, points: r.bins.map((b) => [b.t, b.goodput]) })),
      },
      {
        title: 'Admitted p99',
        yLabel: 'ms',
        yMax: 300,
        series: results.map((r) => ({
          name: r.change,
          color: r.color,
          points: r.bins.map((b) => [b.t, Number.isFinite(b.p99) ? b.p99 : 300]),
        })),
      },
      {
        title: 'Latency rule: limit, base RT',
        yLabel: 'limit (requests), base RT (ms)',
        yMax: 60,
        series: results.flatMap((r) => [
          { name: r.change, color: r.color, points: r.samples.map((s) => [seconds(s.t), s.limit ?? 0]) },
          { name: r.change, color: r.color, dashed: true, points: r.samples.map((s) => [seconds(s.t), s.baseRt ?? 0]) },
        ]),
      },
    ],
  })
  writeResults(
    'overload-capacity-change',
    lines,
    { nominal: NOMINAL, load: LOAD, changeAt: CHANGE_AT, results },
    { '': chart },
  )
}

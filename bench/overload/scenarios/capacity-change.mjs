// The upstream's capacity halves in the middle of an overload (a deploy that loses half the slots, or a noisy
// neighbour that doubles the service time), then doubles back. A gateway with httpGuard's defaults is driven at 3x
// the upstream's first capacity; CHANGE_AT seconds into the overload the upstream changes, CHANGE_AT seconds later it
// is restored, and the run goes on CHANGE_AT seconds more. The gateway's latency rule is sampled every 100 ms. Follow
// time: from a change to the first moment from which the next 2 s, and the rest of that phase, give at least 90 % of
// the capacity (the nominal one, or what the upstream measured it could serve in that phase if less: on a busy
// machine its timers fire late) as goodput with an admitted p99 within 150 ms. With --proxies (PROXIES=1), the same
// runs for HAProxy and nginx tuned for the first capacity in front of the unprotected gateway, and for httpGuard
// behind HAProxy's defaults (lib/proxy-contenders.mjs; the proxies without limits collapse at 3x before any change,
// as the upstream scenario shows, and are left out).
// Writes bench/results/overload-capacity-change.{md,json,svg}.
import { createRequire } from 'module'
import * as os from 'os'
import { machine } from '../../harness.mjs'
import { getJson } from '../lib/processes.mjs'
import { summaryEntry, updateProxySummary } from '../lib/proxies-summary.mjs'
import { prepareProxies, proxyContenders, startProxyFor, withProxies } from '../lib/proxy-contenders.mjs'
import { proxiesLine } from '../lib/proxy-report.mjs'
import { watchUpstream } from '../lib/upstream-account.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'
import { timelineChart } from '../lib/timeline-chart.mjs'
import { startPair, tuneProxies } from './upstream.mjs'

const require = createRequire(import.meta.url)
const { summarize, timeline } = require('../../lib/open-loop.cjs')
const { runLeanLoad } = require('../../lib/lean-load.cjs')

const NOMINAL = 400 // 8 at a time, 20 ms each (the upstream's defaults)
const WARM_SECONDS = 3
const CHANGE_AT = Number(process.env.CHANGE_AT ?? 10) // seconds into the overload; each phase lasts as long
const LOAD = 3
const SLO_MS = 500
const BIN_MS = 250
const WINDOW_MS = 2000
const CHANGES = [
  { name: 'slots halved (8 to 4)', query: 'concurrency=4', color: '#3b7dd8' },
  { name: 'service time doubled (20 to 40 ms)', query: 'serviceMs=40', color: '#d08c1f' },
]
const RESTORE = 'concurrency=8&serviceMs=20'
const BULWARK = { id: 'bulwark', name: 'bulwark httpGuard (defaults)', mode: 'bulwark' }

/**
 * Seconds from `fromMs` until the first moment from which both the next WINDOW_MS and the rest of the phase (to
 * `endMs`) meet the goodput and p99 targets (Infinity: never).
 */
function followTime(run, fromMs, endMs, capacity) {
  const meets = (from, to) => {
    const s = summarize(run, from, to, SLO_MS)
    return s.goodputPerSecond >= 0.9 * capacity && s.p99 <= 150
  }
  for (let t = fromMs; t + WINDOW_MS <= endMs; t += BIN_MS) {
    if (meets(t, t + WINDOW_MS) && meets(t, endMs)) return (t - fromMs) / 1000
  }
  return Infinity
}

async function runChange(change, contender, tuning) {
  const pair = await startPair({ MODE: contender.mode })
  const proxy = await startProxyFor(contender, pair.gateway.port, tuning)
  const schedule = [
    { rate: 0.5 * NOMINAL, seconds: WARM_SECONDS },
    { rate: LOAD * NOMINAL, seconds: 3 * CHANGE_AT },
  ]
  const changeMs = (WARM_SECONDS + CHANGE_AT) * 1000
  const restoreMs = changeMs + CHANGE_AT * 1000
  const endMs = restoreMs + CHANGE_AT * 1000
  const samples = []
  const started = performance.now()
  const sampleLimit = async () => {
    const t = performance.now() - started
    const latency = (await getJson(pair.gateway.port, '/__stats')).inbound?.latency
    samples.push({ t, ...latency })
  }
  const sampler = contender.mode === 'bulwark' ? setInterval(sampleLimit, 100) : undefined
  const timers = [
    setTimeout(() => getJson(pair.upstream.port, `/__set?${change.query}`), changeMs),
    setTimeout(() => getJson(pair.upstream.port, `/__set?${RESTORE}`), restoreMs),
  ]
  // What the upstream can serve in each phase on this machine (its timers fire late when it is busy); each window
  // closes before the next change, as the capacity is counted with the slots the upstream has when it closes.
  const accounts = [
    watchUpstream(pair.upstream.port, changeMs - 5000, changeMs - 100),
    watchUpstream(pair.upstream.port, changeMs + 500, restoreMs - 100),
    watchUpstream(pair.upstream.port, restoreMs + 500, endMs),
  ]
  const port = proxy?.port ?? pair.gateway.port
  const run = await runLeanLoad({ port, schedule, criticalEvery: 10, drainSeconds: 3 })
  clearInterval(sampler)
  timers.forEach(clearTimeout)
  const [oldCapacity, halved, restored] = await Promise.all(accounts.map((a) => a.result()))
  await proxy?.stop()
  await pair.stop()
  const newCapacity = Math.min(NOMINAL / 2, halved.capacity)
  const backCapacity = Math.min(NOMINAL, restored.capacity)
  return {
    id: contender.id,
    contender: contender.name,
    tuned: contender.tuned === true,
    change: change.name,
    color: change.color,
    before: summarize(run, changeMs - 5000, changeMs, SLO_MS),
    after: summarize(run, changeMs + 3000, restoreMs, SLO_MS),
    // The goal's window: from 2 s after the change to the restore.
    goalWindow: summarize(run, changeMs + 2000, restoreMs, SLO_MS),
    back: summarize(run, restoreMs + 3000, endMs, SLO_MS),
    upstream: { before: oldCapacity, halved, restored },
    newCapacity,
    backCapacity,
    follow: followTime(run, changeMs, restoreMs, newCapacity),
    followBack: followTime(run, restoreMs, endMs, backCapacity),
    unanswered: summarize(run, 0, endMs, SLO_MS).unanswered,
    capped: run.generator.capped,
    bins: timeline(run, 0, endMs, BIN_MS, SLO_MS).map((b, i) => ({
      t: (i * BIN_MS) / 1000,
      goodput: b.goodputPerSecond,
      p99: b.p99,
      shed: b.shedRate,
    })),
    samples,
  }
}

/** Per change: bulwark's goodput from 2 s after the change to the restore, against each tuned proxy's. */
function proxyGoals(results) {
  return CHANGES.flatMap((change) => {
    const mine = results.find((r) => r.id === 'bulwark' && r.change === change.name)
    const tuned = results.filter((r) => r.tuned && r.change === change.name)
    if (mine === undefined || tuned.length === 0) return []
    const best = tuned.reduce((a, b) => (b.goalWindow.goodputPerSecond > a.goalWindow.goodputPerSecond ? b : a))
    const g = (r) => r.goalWindow.goodputPerSecond
    return [
      [
        `${change.name}: goodput from 2 s after the change >= every proxy tuned for the old capacity`,
        g(mine) >= g(best),
        `${fmt(g(mine))}/s against ${tuned.map((r) => `${r.contender} ${fmt(g(r))}/s`).join(', ')}`,
      ],
    ]
  })
}

function chart(results) {
  const mine = results.filter((r) => r.id === 'bulwark')
  const seconds = (ms) => ms / 1000
  return timelineChart({
    tMax: WARM_SECONDS + 3 * CHANGE_AT,
    markers: [
      { t: WARM_SECONDS + CHANGE_AT, label: 'the capacity halves' },
      { t: WARM_SECONDS + 2 * CHANGE_AT, label: 'it doubles back' },
    ],
    legend: mine.map((r) => ({ name: r.change, color: r.color })),
    note: `${machine()}; httpGuard (defaults); goodput and p99 per ${BIN_MS} ms; the limit (solid) and the learned base response time (dashed, right) every 100 ms`,
    panels: [
      {
        title: 'Goodput (2xx within 500 ms)',
        yLabel: 'requests / s',
        yMax: 1.2 * NOMINAL,
        series: mine.map((r) => ({ name: r.change, color: r.color, points: r.bins.map((b) => [b.t, b.goodput]) })),
      },
      {
        title: 'Admitted p99',
        yLabel: 'ms',
        yMax: 300,
        series: mine.map((r) => ({
          name: r.change,
          color: r.color,
          points: r.bins.map((b) => [b.t, Number.isFinite(b.p99) ? b.p99 : 300]),
        })),
      },
      {
        title: 'Latency rule: limit, base RT',
        yLabel: 'limit (requests), base RT (ms)',
        yMax: 60,
        series: mine.flatMap((r) => [
          { name: r.change, color: r.color, points: r.samples.map((s) => [seconds(s.t), s.limit ?? 0]) },
          { name: r.change, color: r.color, dashed: true, points: r.samples.map((s) => [seconds(s.t), s.baseRt ?? 0]) },
        ]),
      },
    ],
  })
}

export async function run() {
  const loadAtStart = os.loadavg()[0]
  console.log(`Machine: ${machine()}`)
  const versions = withProxies() ? prepareProxies() : undefined
  const tuning = withProxies() ? await tuneProxies() : undefined
  const contenders = [BULWARK, ...(tuning ? proxyContenders(tuning, { defaults: false }) : [])]
  const results = []
  for (const change of CHANGES) {
    for (const contender of contenders) {
      process.stdout.write(`${contender.name}, ${change.name}... `)
      const r = await runChange(change, contender, tuning)
      results.push(r)
      console.log(`follows in ${fmt(r.follow, 2)} s, back in ${fmt(r.followBack, 2)} s`)
    }
  }
  const lines = [
    "### Overload, I/O-bound: the upstream's capacity halves mid-run",
    '',
    `${machineLine(loadAtStart)}. The upstream serves 8 requests at a time, 20 ms each (${NOMINAL} req/s nominal); the gateway is driven at ${LOAD}x that (${LOAD * NOMINAL} req/s) after ${WARM_SECONDS} s at 0.5x; ${CHANGE_AT} s into the overload the upstream's capacity halves (${NOMINAL / 2} req/s), ${CHANGE_AT} s later it is restored, and the overload goes on ${CHANGE_AT} s more. Before: the 5 s before the change; after: from 3 s after it to the restore; restored: from 3 s after the restore to the end. Follows within: from the change (the restore) until the first moment from which the next 2 s, and the rest of that phase, give at least 90 % of the capacity as goodput (answered 200 within ${SLO_MS} ms) with an admitted p99 within 150 ms. Capacity: the nominal one, or what the upstream measured it could serve in that phase if less (on a busy machine its timers fire late).`,
    '',
    ...table(
      [
        'the change',
        'contender',
        'goodput/s before',
        'p99 ms before',
        'goodput/s after',
        'new capacity/s measured',
        'goodput % of new capacity',
        'p99 ms after',
        'follows within (s)',
        'goodput/s restored (% of capacity)',
        'follows the restore within (s)',
        'unanswered',
      ],
      results.map((r) => [
        r.change,
        r.contender,
        fmt(r.before.goodputPerSecond),
        fmt(r.before.p99, 0, 'timeout'),
        fmt(r.after.goodputPerSecond),
        fmt(r.upstream.halved.capacity),
        fmt((100 * r.after.goodputPerSecond) / r.newCapacity),
        fmt(r.after.p99, 0, 'timeout'),
        fmt(r.follow, 2),
        `${fmt(r.back.goodputPerSecond)} (${fmt((100 * r.back.goodputPerSecond) / r.backCapacity)})`,
        fmt(r.followBack, 2),
        String(r.unanswered),
      ]),
    ),
    '',
  ]
  if (tuning) lines.push(proxiesLine(versions, tuning, 'the unprotected gateway, before any change'), '')
  const mine = results.filter((r) => r.id === 'bulwark')
  const goals = [
    ...mine.flatMap((r) => [
      [`${r.change}: follows within 2 s`, r.follow <= 2, `${fmt(r.follow, 2)} s`],
      [`${r.change}: nothing times out`, r.unanswered === 0, `${r.unanswered} unanswered`],
    ]),
    ...proxyGoals(results),
  ]
  lines.push(...goalsTable('goal (bulwark httpGuard, defaults)', goals))
  const capped = results.filter((r) => r.capped)
  if (capped.length > 0) {
    lines.push(
      '',
      `The generator fell behind: ${capped.map((r) => `${r.contender}, ${r.change}: ${r.capped}`).join('; ')}.`,
    )
  }
  writeResults(
    'overload-capacity-change',
    lines,
    { nominal: NOMINAL, load: LOAD, changeAt: CHANGE_AT, tuning, versions, results },
    { '': chart(results) },
  )
  if (tuning) {
    const entry = summaryEntry(loadAtStart, versions, tuning, {
      results: CHANGES.map((change) => ({
        change: change.name,
        rows: results
          .filter((r) => r.change === change.name)
          .map((r) => ({
            id: r.id,
            afterGoodput: r.after.goodputPerSecond,
            newCapacity: r.newCapacity,
            follow: r.follow,
          })),
      })),
      goals: proxyGoals(results),
    })
    updateProxySummary('capacity-change', entry)
  }
}

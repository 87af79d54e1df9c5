// The CPU-bound scenario: a cluster of 2 node:http workers whose handler costs CPU_MS of CPU plus WAIT_MS of
// waiting is driven by an open-loop generator at 0.5x, 1x, 2x and 4x of its measured capacity, then back to 0.5x,
// for each contender: no protection, a static concurrency limit tuned at 1x, overload-protection (event-loop-delay
// shedding in the style of toobusy), Fastify with @fastify/under-pressure (the Fastify ecosystem's own answer), and
// bulwark's BbrLimiter shared by the workers with 10 % critical traffic (with its latency rule on, the default, and
// off). Each bulwark row says which rule shed, and the load average of its step. Writes
// bench/results/overload.{md,json,svg}; with CONTENDERS=<regex> only the matching contenders run (beside `none`,
// which gives the unloaded p99) and nothing is written.
import { createRequire } from 'module'
import * as os from 'os'
import { machine, peer } from '../../harness.mjs'
import { overloadChart } from '../lib/chart.mjs'
import { getJson, startServer, stopServer } from '../lib/processes.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'

const require = createRequire(import.meta.url)
const { runOpenLoop, runClosedLoop, summarize, timeline } = require('../../lib/open-loop.cjs')
const CPU_MS = Number(process.env.CPU_MS ?? 8)
const WAIT_MS = Number(process.env.WAIT_MS ?? 20)
const STEP_SECONDS = Number(process.env.STEP_SECONDS ?? 8)
const SETTLE_SECONDS = 2 // each step's first seconds are the transition, not the steady state
const SLO_MS = 500
const LOADS = [0.5, 1, 2, 4]
const BULWARK = 'bulwark BbrLimiter'
const ONLY = process.env.CONTENDERS ? new RegExp(process.env.CONTENDERS) : undefined

export function startCluster(mode, extraEnv = {}) {
  return startServer('cpu-cluster.cjs', {
    MODE: mode,
    CPU_MS: String(CPU_MS),
    WAIT_MS: String(WAIT_MS),
    SHARED: `overload-${process.pid}-${mode}`,
    ...extraEnv,
  })
}

/** Capacity: the unprotected cluster's throughput with enough concurrent connections to saturate it. */
export async function measureCapacity() {
  const { child, port } = await startCluster('none')
  await runClosedLoop({ port, concurrency: 64, seconds: 2 }) // warm up
  const capacity = await runClosedLoop({ port, concurrency: 64, seconds: 5 })
  await stopServer(child)
  return capacity
}

function firstBinWhere(bins, binMs, predicate) {
  const i = bins.findIndex(predicate)
  return i < 0 ? Infinity : (i * binMs) / 1000
}

/** The limiter's shed counters by rule (host-wide: the workers share it), or undefined for the other modes. */
async function shedByRule(mode, port) {
  if (mode !== 'bulwark') return undefined
  const s = await getJson(port, '/__stats')
  return { inFlight: s.shedInFlight, queueDelay: s.shedQueueDelay, latency: s.shedLatency }
}

async function runContender(name, mode, capacity, extraEnv) {
  const { child, port } = await startCluster(mode, extraEnv)
  const schedule = [...LOADS, 0.5].map((load) => ({ rate: load * capacity, seconds: STEP_SECONDS }))
  // At each step's end: the load average and the limiter's counters, to say what each step shed and how busy the
  // machine was meanwhile.
  const marks = []
  const timers = schedule.map((_, i) =>
    setTimeout(
      async () => (marks[i] = { load: os.loadavg()[0], shed: await shedByRule(mode, port).catch(() => undefined) }),
      (i + 1) * STEP_SECONDS * 1000,
    ),
  )
  const run = await runOpenLoop({ port, schedule, criticalEvery: 10, drainSeconds: 3 })
  timers.forEach(clearTimeout)
  await stopServer(child)
  const step = STEP_SECONDS * 1000
  const rows = LOADS.map((load, i) => {
    const s = summarize(run, i * step + SETTLE_SECONDS * 1000, (i + 1) * step, SLO_MS)
    const before = marks[i - 1]?.shed ?? { inFlight: 0, queueDelay: 0, latency: 0 }
    const after = marks[i]?.shed
    const shedBy = after && Object.fromEntries(Object.entries(after).map(([rule, n]) => [rule, n - before[rule]]))
    return { contender: name, load, ...s, goodput: s.goodputPerSecond, loadAverage: marks[i]?.load, shedBy }
  })
  // Onset: after the step to 4x, the first 250 ms in which at least half of the excess is shed.
  const binMs = 250
  const stepUp = timeline(run, 3 * step, 4 * step, binMs)
  const onset = firstBinWhere(stepUp, binMs, (b) => b.shedRate >= 0.5 * (1 - 1 / 4))
  // Recovery: after the step back to 0.5x, the first 250 ms from which nothing is shed and p99 is within the SLO.
  const stepDown = timeline(run, 4 * step, 5 * step, binMs)
  const settledFrom = stepDown.findIndex((b, i) => stepDown.slice(i).every((x) => x.shedRate === 0 && x.p99 <= SLO_MS))
  const recovery = settledFrom < 0 ? Infinity : (settledFrom * binMs) / 1000
  return { rows, onset, recovery }
}

export async function run() {
  const loadAtStart = os.loadavg()[0]
  console.log(`Machine: ${machine()}`)
  console.log(`Handler: ${CPU_MS} ms CPU + ${WAIT_MS} ms wait; 2 workers; steps of ${STEP_SECONDS} s; SLO ${SLO_MS} ms`)
  console.log(
    '(2 cores here: the load generator shares them with the 2 workers, so shedding and generating cost capacity)',
  )
  const capacity = await measureCapacity()
  console.log(`Measured capacity: ${capacity.toFixed(0)} req/s`)
  const perWorker = capacity / 2
  const staticLimit = Math.max(1, Math.ceil((perWorker * (CPU_MS + WAIT_MS)) / 1000) + 1)
  const contenders = [
    ['none', 'none', {}],
    [`static limit ${staticLimit}/worker`, 'static', { STATIC_LIMIT: String(staticLimit) }],
    [peer('overload-protection'), 'overload-protection', {}],
    [peer('@fastify/under-pressure'), 'under-pressure', {}],
    [BULWARK, 'bulwark', {}],
    [`${BULWARK}, latency rule off`, 'bulwark', { LATENCY: 'off' }],
  ].filter(([name]) => name === 'none' || ONLY === undefined || ONLY.test(name))
  const all = []
  const summary = []
  for (const [name, mode, env] of contenders) {
    process.stdout.write(`running ${name}...`)
    const r = await runContender(name, mode, capacity, env)
    all.push(...r.rows)
    summary.push({ name, onset: r.onset, recovery: r.recovery })
    console.log(' done')
  }
  // The unloaded p99: the unprotected server at half its capacity.
  const unloadedP99 = all.find((r) => r.contender === 'none' && r.load === 0.5).p99
  const lines = [
    '### Overload: goodput and latency against offered load',
    '',
    `${machineLine(loadAtStart)}. Handler ${CPU_MS} ms CPU + ${WAIT_MS} ms wait, a cluster of 2 workers, measured capacity ${capacity.toFixed(0)} req/s, SLO ${SLO_MS} ms, 10 % critical requests. The open-loop generator runs on the same 2 cores.`,
    '',
    `Peers: ${peer('overload-protection')} (its defaults), ${peer('@fastify/under-pressure')} on ${peer('fastify')} (maxEventLoopDelay 1000 ms, maxEventLoopUtilization 0.98, as in its README).`,
    '',
    ...table(
      [
        'contender',
        'load',
        'offered/s',
        'goodput/s',
        'goodput % of capacity',
        'p50 ms',
        'p99 ms (not shed)',
        'shed %',
        'critical ok %',
        'shed by rule (whole step): in-flight / queue delay / latency',
        'load average',
      ],
      all.map((r) => [
        r.contender,
        `${r.load}x`,
        fmt(r.offeredPerSecond),
        fmt(r.goodput),
        fmt((100 * r.goodput) / capacity),
        fmt(r.p50, 0, 'timeout'),
        fmt(r.p99, 0, 'timeout'),
        fmt(100 * r.shedRate, 1),
        fmt(100 * r.criticalSuccess, 1),
        r.shedBy ? `${r.shedBy.inFlight} / ${r.shedBy.queueDelay} / ${r.shedBy.latency}` : '',
        fmt(r.loadAverage, 1, ''),
      ]),
    ),
    '',
    ...table(
      ['contender', 'sheds within (s) of the step to 4x', 'recovers within (s) of the step back to 0.5x'],
      summary.map((s) => [s.name, fmt(s.onset, 2), fmt(s.recovery, 2)]),
    ),
    '',
  ]
  const bulwark4x = all.find((r) => r.contender === BULWARK && r.load === 4)
  const b = summary.find((s) => s.name === BULWARK)
  if (ONLY !== undefined || !bulwark4x) {
    console.log([...lines, '(CONTENDERS set: nothing written)'].join('\n'))
    return
  }
  lines.push(
    ...goalsTable('goal (bulwark)', [
      [
        'goodput at 4x >= 90 % of capacity',
        bulwark4x.goodput >= 0.9 * capacity,
        `${fmt((100 * bulwark4x.goodput) / capacity)} %`,
      ],
      [
        'admitted p99 at 4x <= 5x unloaded p99',
        bulwark4x.p99 <= 5 * unloadedP99,
        `${fmt(bulwark4x.p99)} ms vs 5 x ${fmt(unloadedP99)} ms`,
      ],
      [
        'critical success at 4x >= 99 %',
        bulwark4x.criticalSuccess >= 0.99,
        `${fmt(100 * bulwark4x.criticalSuccess, 1)} %`,
      ],
      ['sheds within 2 s of the step', b.onset <= 2, `${fmt(b.onset, 2)} s`],
      ['recovers within 2 s of its end', b.recovery <= 2, `${fmt(b.recovery, 2)} s`],
    ]),
  )
  writeResults(
    'overload',
    lines,
    { capacity, cpuMs: CPU_MS, waitMs: WAIT_MS, rows: all, summary },
    { '': overloadChart(all, { capacity, machine: machine() }) },
  )
}

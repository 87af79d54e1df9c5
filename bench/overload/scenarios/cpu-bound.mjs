// The CPU-bound scenario: a cluster of 2 node:http workers whose handler costs CPU_MS of CPU plus WAIT_MS of
// waiting is driven by the lean open-loop generator at 0.5x, 1x, 2x, 4x and 10x of its measured capacity, then back
// to 0.5x, for each contender: no protection, a static concurrency limit tuned at 1x, overload-protection
// (event-loop-delay shedding in the style of toobusy), Fastify with @fastify/under-pressure (the Fastify ecosystem's
// own answer), and bulwark's BbrLimiter shared by the workers with 10 % critical traffic (with its latency rule on,
// the default, and off); with --proxies (PROXIES=1), HAProxy and nginx in front of the unprotected cluster, with
// their defaults and with limits tuned at 1x, and bulwark's cluster behind HAProxy's defaults
// (lib/proxy-contenders.mjs). Each bulwark row says which rule shed, and the load average of its step. Writes
// bench/results/overload.{md,json,svg}; with CONTENDERS=<regex> only the matching contenders run (beside `none`,
// which gives the unloaded p99) and nothing is written.
import { createRequire } from 'module'
import * as os from 'os'
import { machine, peer } from '../../harness.mjs'
import { overloadChart } from '../lib/chart.mjs'
import { processTreeMs } from '../lib/cpu-split.mjs'
import { getJson, startServer, stopServer } from '../lib/processes.mjs'
import { stepsEntry, updateProxySummary } from '../lib/proxies-summary.mjs'
import { measureTuning, prepareProxies, proxyContenders, startProxyFor, withProxies } from '../lib/proxy-contenders.mjs'
import { proxyChartRows, proxyCpuCell, proxySection } from '../lib/proxy-report.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'
import { recoveryTime, sheddingOnset } from '../lib/transitions.mjs'

const require = createRequire(import.meta.url)
const { runClosedLoop, summarize } = require('../../lib/open-loop.cjs')
const { runLeanLoad } = require('../../lib/lean-load.cjs')
const CPU_MS = Number(process.env.CPU_MS ?? 8)
const WAIT_MS = Number(process.env.WAIT_MS ?? 20)
const STEP_SECONDS = Number(process.env.STEP_SECONDS ?? 8)
const SETTLE_SECONDS = 2 // each step's first seconds are the transition, not the steady state
const SLO_MS = 500
const LOADS = (process.env.LOADS ?? '0.5,1,2,4,10').split(',').map(Number)
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

/** The limiter's shed counters by rule (host-wide: the workers share it), or undefined for the other modes. */
async function shedByRule(mode, port) {
  if (mode !== 'bulwark') return undefined
  const s = await getJson(port, '/__stats')
  return { inFlight: s.shedInFlight, queueDelay: s.shedQueueDelay, latency: s.shedLatency }
}

async function runContender(contender, capacity, tuning) {
  const { id, name, mode, env } = contender
  const { child, port } = await startCluster(mode, env)
  const proxy = await startProxyFor(contender, port, tuning)
  const schedule = [...LOADS, 0.5].map((load) => ({ rate: load * capacity, seconds: STEP_SECONDS }))
  const step = STEP_SECONDS * 1000
  // At each step's end: the load average and the limiter's counters, to say what each step shed and how busy the
  // machine was meanwhile; and the CPU of the cluster and of the proxy when each step's measured part begins and ends.
  const marks = []
  const cpuAt = []
  const readCpu = () => ({ server: processTreeMs(child.pid), proxy: proxy?.cpuMs() })
  const timers = schedule.flatMap((_, i) => [
    setTimeout(() => (cpuAt[2 * i] = readCpu()), i * step + SETTLE_SECONDS * 1000),
    setTimeout(
      async () => {
        cpuAt[2 * i + 1] = readCpu()
        marks[i] = { load: os.loadavg()[0], shed: await shedByRule(mode, port).catch(() => undefined) }
      },
      (i + 1) * step,
    ),
  ])
  const run = await runLeanLoad({ port: proxy?.port ?? port, schedule, criticalEvery: 10, drainSeconds: 3 })
  timers.forEach(clearTimeout)
  await proxy?.stop()
  await stopServer(child)
  const measuredMs = step - SETTLE_SECONDS * 1000
  const cpuShare = (i, key) => (100 * (cpuAt[2 * i + 1]?.[key] - cpuAt[2 * i]?.[key])) / measuredMs
  const rows = LOADS.map((load, i) => {
    const s = summarize(run, i * step + SETTLE_SECONDS * 1000, (i + 1) * step, SLO_MS)
    const before = marks[i - 1]?.shed ?? { inFlight: 0, queueDelay: 0, latency: 0 }
    const after = marks[i]?.shed
    const shedBy = after && Object.fromEntries(Object.entries(after).map(([rule, n]) => [rule, n - before[rule]]))
    const cpu = { server: cpuShare(i, 'server'), ...(proxy && { proxy: cpuShare(i, 'proxy') }) }
    const about = {
      id,
      contender: name,
      short: contender.short,
      viaProxy: proxy !== undefined,
      tuned: !!contender.tuned,
    }
    return { ...about, load, ...s, goodput: s.goodputPerSecond, loadAverage: marks[i]?.load, shedBy, cpu }
  })
  const up = LOADS.indexOf(4)
  const onset = up < 0 ? NaN : sheddingOnset(run, up * step, (up + 1) * step, 4)
  const recovery = recoveryTime(run, LOADS.length * step, (LOADS.length + 1) * step, SLO_MS)
  return { rows, onset, recovery }
}

/** The proxies' limits: `capacity` and the unloaded response time of a fresh unprotected cluster. */
async function tuneProxies(capacity) {
  const { child, port } = await startCluster('none')
  const tuning = await measureTuning(port, capacity)
  await stopServer(child)
  return tuning
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
  const versions = withProxies() ? prepareProxies() : undefined
  const tuning = withProxies() ? await tuneProxies(capacity) : undefined
  const contenders = [
    ['none', 'none', 'none'],
    [`static limit ${staticLimit}/worker`, 'static', 'static', { STATIC_LIMIT: String(staticLimit) }],
    [peer('overload-protection'), 'overload-protection', 'overload-protection'],
    [peer('@fastify/under-pressure'), 'under-pressure', 'under-pressure'],
    [BULWARK, 'bulwark', 'bulwark'],
    [`${BULWARK}, latency rule off`, 'bulwark-no-latency', 'bulwark', { LATENCY: 'off' }],
  ]
    .map(([name, id, mode, env = {}]) => ({ id, name, mode, env }))
    .concat(tuning ? proxyContenders(tuning).map((c) => ({ ...c, env: {} })) : [])
    .filter(({ name }) => name === 'none' || ONLY === undefined || ONLY.test(name))
  const all = []
  const summary = []
  for (const contender of contenders) {
    process.stdout.write(`running ${contender.name}...`)
    const r = await runContender(contender, capacity, tuning)
    all.push(...r.rows)
    summary.push({ name: contender.name, onset: r.onset, recovery: r.recovery })
    console.log(' done')
  }
  // The unloaded p99: the unprotected server at half its capacity.
  const unloadedP99 = all.find((r) => r.contender === 'none' && r.load === 0.5).p99
  const lines = [
    '### Overload: goodput and latency against offered load',
    '',
    `${machineLine(loadAtStart)}. Handler ${CPU_MS} ms CPU + ${WAIT_MS} ms wait, a cluster of 2 workers, measured capacity ${capacity.toFixed(0)} req/s, SLO ${SLO_MS} ms, 10 % critical requests, steps of ${STEP_SECONDS} s (the first ${SETTLE_SECONDS} s of each left out of its row). The lean open-loop generator (raw keep-alive sockets) runs on the same 2 cores.`,
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
        ...(tuning ? ['proxy CPU % of a core'] : []),
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
        ...(tuning ? [proxyCpuCell(r)] : []),
      ]),
    ),
    '',
    ...table(
      ['contender', 'sheds within (s) of the step to 4x', 'recovers within (s) of the step back to 0.5x'],
      summary.map((s) => [s.name, fmt(s.onset, 2), fmt(s.recovery, 2)]),
    ),
    '',
  ]
  const measuredWhat = 'the unprotected cluster (its capacity as above)'
  const proxies = tuning && proxySection({ rows: all, versions, tuning, measuredWhat, bulwarkId: 'bulwark' })
  if (proxies) lines.push(...proxies.lines)
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
  const chart = (rows) => overloadChart(rows, { capacity, machine: machine() })
  writeResults(
    'overload',
    lines,
    { capacity, cpuMs: CPU_MS, waitMs: WAIT_MS, tuning, versions, rows: all, summary },
    {
      '': chart(all.filter((r) => !r.viaProxy)),
      ...(proxies && { '-cpu-bound-proxies': chart(proxyChartRows(all, 'bulwark')) }),
    },
  )
  if (proxies) {
    updateProxySummary(
      'cpu-bound',
      stepsEntry(loadAtStart, versions, tuning, all, () => capacity, proxies),
    )
  }
}

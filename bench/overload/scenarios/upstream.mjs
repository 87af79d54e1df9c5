// The I/O-bound scenario: an upstream that serves CONCURRENCY requests at a time, SERVICE_MS each (400 req/s with
// the defaults), and queues the rest; in front of it a node:http gateway whose CPU is nearly idle. The gateway is
// driven at 0.5x to 10x of the upstream's capacity, one fresh pair of servers per run (3 s at 0.5x to warm up, then
// STEP_SECONDS at the load, the first 2 s of which are the transition, then RECOVER_SECONDS back at 0.5x), for each
// contender: no protection, overload-protection (event-loop-delay shedding), bulwark's httpGuard with the latency
// rule off (what bulwark did before it), Netflix concurrency-limits' Gradient2 and Vegas (servers/netflix-limits.cjs),
// and httpGuard with its defaults (LOADS and MODES select some). With --proxies (PROXIES=1), HAProxy and nginx too,
// in front of the unprotected gateway with their defaults and with limits tuned at 1x, and httpGuard behind
// HAProxy's defaults (lib/proxy-contenders.mjs). Writes bench/results/overload-upstream.{md,json,svg}.
import { createRequire } from 'module'
import * as os from 'os'
import { machine } from '../../harness.mjs'
import { overloadChart } from '../lib/chart.mjs'
import { processTreeMs } from '../lib/cpu-split.mjs'
import { getJson, startServer, stopServer } from '../lib/processes.mjs'
import {
  measureTuning,
  prepareProxies,
  proxyContenders,
  startProxyFor,
  watchCpu,
  withProxies,
} from '../lib/proxy-contenders.mjs'
import { proxyChartRows, proxyCpuCell, proxySection } from '../lib/proxy-report.mjs'
import { stepsEntry, updateProxySummary } from '../lib/proxies-summary.mjs'
import { recoveryTime, sheddingOnset } from '../lib/transitions.mjs'
import { watchUpstream } from '../lib/upstream-account.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'

const require = createRequire(import.meta.url)
const { summarize } = require('../../lib/open-loop.cjs')
const { runLeanLoad } = require('../../lib/lean-load.cjs')

export const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8)
export const SERVICE_MS = Number(process.env.SERVICE_MS ?? 20)
const STEP_SECONDS = Number(process.env.STEP_SECONDS ?? 10)
const LOADS = (process.env.LOADS ?? '0.5,1,2,3,4,10').split(',').map(Number)
export const WARM_SECONDS = 3
const RECOVER_SECONDS = 4
const SETTLE_SECONDS = 2
const SLO_MS = 500
export const NOMINAL = (CONCURRENCY * 1000) / SERVICE_MS
const BULWARK = 'bulwark httpGuard (defaults)'
const GATEWAY_CONTENDERS = [
  ['none', 'none'],
  ['overload-protection', 'overload-protection'],
  ['bulwark, latency rule off', 'bulwark-no-latency'],
  ['Netflix Gradient2 (defaults)', 'gradient2'],
  ['Netflix Vegas (defaults)', 'vegas'],
  [BULWARK, 'bulwark'],
].map(([name, mode]) => ({ id: mode, name, mode }))
// MODES=bulwark,haproxy-tuned (a comma-separated list of ids: the gateway's modes, the proxies' ids) runs some only.
const MODES = process.env.MODES?.split(',')
const selected = (contenders) => contenders.filter((c) => MODES === undefined || MODES.includes(c.id))

/** One upstream and one gateway in front of it (MODE, OUTBOUND: see servers/gateway.cjs). */
export async function startPair(gatewayEnv, upstreamEnv = {}) {
  const upstream = await startServer('upstream.cjs', {
    CONCURRENCY: String(CONCURRENCY),
    SERVICE_MS: String(SERVICE_MS),
    ...upstreamEnv,
  })
  const gateway = await startServer('gateway.cjs', { UPSTREAMS: JSON.stringify({ '/': upstream.port }), ...gatewayEnv })
  return { upstream, gateway, stop: () => Promise.all([stopServer(gateway.child), stopServer(upstream.child)]) }
}

async function runOne(contender, load, tuning) {
  const pair = await startPair({ MODE: contender.mode })
  const proxy = await startProxyFor(contender, pair.gateway.port, tuning)
  const schedule = [
    { rate: 0.5 * NOMINAL, seconds: WARM_SECONDS },
    { rate: load * NOMINAL, seconds: STEP_SECONDS },
    { rate: 0.5 * NOMINAL, seconds: RECOVER_SECONDS },
  ]
  const from = (WARM_SECONDS + SETTLE_SECONDS) * 1000
  const to = (WARM_SECONDS + STEP_SECONDS) * 1000
  const end = to + RECOVER_SECONDS * 1000
  const account = watchUpstream(pair.upstream.port, from, to)
  const gatewayPid = pair.gateway.child.pid
  const cpu = watchCpu({ server: () => processTreeMs(gatewayPid), proxy: proxy?.cpuMs }, from, to)
  const port = proxy?.port ?? pair.gateway.port
  const run = await runLeanLoad({ port, schedule, criticalEvery: 10, drainSeconds: 3 })
  const stats = await getJson(pair.gateway.port, '/__stats')
  const upstream = await getJson(pair.upstream.port, '/__stats')
  const inRun = await account.result()
  await proxy?.stop()
  await pair.stop()
  const s = summarize(run, from, to, SLO_MS)
  const limiter = stats.inbound
  return {
    id: contender.id,
    contender: contender.name,
    short: contender.short,
    viaProxy: proxy !== undefined,
    tuned: contender.tuned === true,
    load,
    ...s,
    goodput: s.goodputPerSecond,
    onset: sheddingOnset(run, WARM_SECONDS * 1000, to, load),
    recovery: recoveryTime(run, to, end, SLO_MS),
    capped: run.generator.capped,
    sentPerSecond:
      run.generator.sentPerSecond.slice(WARM_SECONDS, WARM_SECONDS + STEP_SECONDS).reduce((a, b) => a + b, 0) /
      STEP_SECONDS,
    upstreamMaxQueued: upstream.maxQueued,
    upstream: inRun,
    shedBy:
      limiter?.shedLatency === undefined
        ? undefined
        : {
            latency: limiter.shedLatency,
            inFlight: limiter.shedInFlight,
            queueDelay: limiter.shedQueueDelay,
          },
    latencyCheck: limiter?.latency ?? limiter, // bulwark's latency rule, or a Netflix limit
    cpu: cpu.result(),
  }
}

function shedByText(r) {
  if (r.shedBy === undefined) return ''
  const { latency, inFlight, queueDelay } = r.shedBy
  return `${latency} / ${inFlight} / ${queueDelay}`
}

/** The proxies' limits, from what a fresh unprotected gateway serves in front of a fresh upstream. */
export async function tuneProxies() {
  const pair = await startPair({ MODE: 'none' })
  const tuning = await measureTuning(pair.gateway.port)
  await pair.stop()
  return tuning
}

export async function run() {
  const loadAtStart = os.loadavg()[0]
  console.log(`Machine: ${machine()}, load average ${loadAtStart.toFixed(1)}`)
  const versions = withProxies() ? prepareProxies() : undefined
  const tuning = withProxies() ? await tuneProxies() : undefined
  const contenders = selected([...GATEWAY_CONTENDERS, ...(tuning ? proxyContenders(tuning) : [])])
  const rows = []
  for (const contender of contenders) {
    for (const load of LOADS) {
      process.stdout.write(`${contender.name} at ${load}x... `)
      const r = await runOne(contender, load, tuning)
      rows.push(r)
      console.log(
        `goodput ${fmt(r.goodput)}/s (upstream capacity ${fmt(r.upstream.capacity)}/s), p99 ${fmt(r.p99, 0, 'timeout')} ms, shed ${fmt(100 * r.shedRate, 1)} %, load average ${os.loadavg()[0].toFixed(1)}`,
      )
    }
  }
  const lines = [
    '### Overload, I/O-bound: a gateway in front of an upstream that queues',
    '',
    `${machineLine(loadAtStart)}. The upstream serves ${CONCURRENCY} requests at a time, ${SERVICE_MS} ms each, and queues the rest (${NOMINAL} req/s nominal); the gateway is a node:http proxy (keep-alive agent) on one process. Loads are multiples of the nominal capacity; each run warms up for ${WARM_SECONDS} s at 0.5x, then holds the load for ${STEP_SECONDS} s, of which the last ${STEP_SECONDS - SETTLE_SECONDS} s are measured, and falls back to 0.5x for ${RECOVER_SECONDS} s. Goodput: answered 200 within ${SLO_MS} ms. Critical: every tenth request is sent as critical; critical ok counts those answered 200 within the SLO. Sheds within: from the step up to the first 250 ms in which at least half of the excess is shed (blank at 1x and below). Recovers within: from the step back to 0.5x to the first 250 ms from which nothing is shed and the p99 stays within the SLO. Upstream capacity: what the upstream served per second of busy slot-time in the measured window, times its slots (below ${NOMINAL} when the machine is busy and its timers fire late), with its slots' busy share. Shed by: the rule that shed (latency / CPU in-flight / queueing delay). The lean open-loop generator runs on the same 2 cores.`,
    '',
    ...table(
      [
        'contender',
        'load',
        'offered/s',
        'goodput/s',
        'upstream capacity/s (busy %)',
        'goodput % of capacity',
        'goodput % of nominal',
        'p50 ms',
        'p99 ms (not shed)',
        'shed %',
        'critical ok %',
        'sheds within (s)',
        'recovers within (s)',
        'unanswered',
        'upstream queue max',
        'shed by',
        ...(tuning ? ['proxy CPU % of a core'] : []),
      ],
      rows.map((r) => [
        r.contender,
        `${r.load}x`,
        fmt(r.sentPerSecond),
        fmt(r.goodput),
        `${fmt(r.upstream.capacity)} (${fmt(100 * r.upstream.utilization)})`,
        fmt((100 * r.goodput) / r.upstream.capacity),
        fmt((100 * r.goodput) / NOMINAL),
        fmt(r.p50, 0, 'timeout'),
        fmt(r.p99, 0, 'timeout'),
        fmt(100 * r.shedRate, 1),
        fmt(100 * r.criticalSuccess, 1),
        fmt(r.onset, 2, r.onset === Infinity ? 'never' : ''),
        fmt(r.recovery, 2),
        String(r.unanswered),
        String(r.upstreamMaxQueued),
        shedByText(r),
        ...(tuning ? [proxyCpuCell(r)] : []),
      ]),
    ),
    '',
  ]
  const capped = rows.filter((r) => r.capped)
  if (capped.length > 0) {
    lines.push(
      'Where the generator could not keep to the schedule: ' +
        capped.map((r) => `${r.contender} at ${r.load}x: ${r.capped}`).join('; ') +
        '.',
      '',
    )
  }
  const proxies =
    tuning && proxySection({ rows, versions, tuning, measuredWhat: 'the unprotected gateway', bulwarkId: 'bulwark' })
  if (proxies) lines.push(...proxies.lines)
  const bulwark = (load) => rows.find((r) => r.contender === BULWARK && r.load === load)
  const goals = []
  const at = (load, check) => {
    const r = bulwark(load)
    if (r !== undefined) goals.push(check(r))
  }
  const ofCapacity = (r) =>
    `${fmt((100 * r.goodput) / r.upstream.capacity)} % (${fmt(r.goodput)} of ${fmt(r.upstream.capacity)}/s; ${fmt((100 * r.goodput) / NOMINAL)} % of nominal)`
  at(3, (r) => ['3x: goodput >= 90 % of capacity', r.goodput >= 0.9 * r.upstream.capacity, ofCapacity(r)])
  at(3, (r) => ['3x: admitted p99 <= 150 ms', r.p99 <= 150, `${fmt(r.p99, 0, 'timeout')} ms`])
  at(10, (r) => ['10x: goodput >= 85 % of capacity', r.goodput >= 0.85 * r.upstream.capacity, ofCapacity(r)])
  const mine = rows.filter((r) => r.contender === BULWARK)
  const unanswered = mine.reduce((sum, r) => sum + r.unanswered, 0)
  goals.push(['nothing times out (every load)', unanswered === 0, `${unanswered} unanswered`])
  at(0.5, (r) => ['0.5x: shed <= 1 %', r.shedRate <= 0.01, `${fmt(100 * r.shedRate, 2)} %`])
  at(1, (r) => [
    '1x: shed <= 5 % (the nominal capacity is a little over the measured one)',
    r.shedRate <= 0.05,
    `${fmt(100 * r.shedRate, 2)} %`,
  ])
  lines.push(...goalsTable('goal (bulwark httpGuard, defaults)', goals))
  // The x axis is in multiples of the nominal capacity, so the dashed line is drawn there too.
  const chart = (chartRows) =>
    overloadChart(chartRows, { capacity: NOMINAL, capacityKind: 'nominal', machine: machine() })
  writeResults(
    'overload-upstream',
    lines,
    { loadAtStart, nominal: NOMINAL, concurrency: CONCURRENCY, serviceMs: SERVICE_MS, tuning, versions, rows },
    {
      '': chart(rows.filter((r) => !r.viaProxy)),
      ...(proxies && { '-proxies': chart(proxyChartRows(rows, 'bulwark')) }),
    },
  )
  if (proxies) {
    updateProxySummary(
      'upstream',
      stepsEntry(loadAtStart, versions, tuning, rows, (r) => r.upstream.capacity, proxies),
    )
  }
}

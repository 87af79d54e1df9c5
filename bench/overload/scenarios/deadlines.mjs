// The deadline scenario: clients give up on a request 1 s after it was due (they tell the server how long they
// will still wait, and their deadline, which the server reads: deadline: { header: 'x-request-deadline', absolute }). One node:http process whose handler costs CPU_MS of CPU plus WAIT_MS
// of waiting is driven at 1x, then 4x of its measured capacity by an open-loop generator with a bounded pool of
// connections (as a gateway's upstream pool), for each contender: no protection, deadline shedding alone,
// BbrLimiter, and BbrLimiter with deadline shedding. Goodput counts answers received within the client's second;
// wasted work counts handler runs that finished after their client had left. Writes bench/results/deadlines.*.
import * as os from 'os'
import { createRequire } from 'module'
import { machine } from '../../harness.mjs'
import { getJson, startServer, stopServer } from '../lib/processes.mjs'
import { fmt, machineLine, table, writeResults } from '../lib/report.mjs'

const require = createRequire(import.meta.url)
const { runOpenLoop, runClosedLoop, summarize } = require('../../lib/open-loop.cjs')
const CPU_MS = Number(process.env.CPU_MS ?? 8)
const WAIT_MS = Number(process.env.WAIT_MS ?? 20)
const STEP_SECONDS = Number(process.env.STEP_SECONDS ?? 10)
const GIVE_UP_MS = 1000
const SOCKETS = Number(process.env.SOCKETS ?? 64)
const SETTLE_SECONDS = 2

const server = (mode) =>
  startServer('deadline-server.cjs', { MODE: mode, CPU_MS: String(CPU_MS), WAIT_MS: String(WAIT_MS) })

async function measureCapacity() {
  const { child, port } = await server('none')
  await runClosedLoop({ port, concurrency: 32, seconds: 2 })
  const capacity = await runClosedLoop({ port, concurrency: 32, seconds: 4 })
  await stopServer(child)
  return capacity
}

async function runContender(name, mode, capacity) {
  const { child, port } = await server(mode)
  const schedule = [1, 4].map((load) => ({ rate: load * capacity, seconds: STEP_SECONDS }))
  const before = await getJson(port, '/__stats')
  const run = await runOpenLoop({
    port,
    schedule,
    criticalEvery: 0,
    maxSockets: SOCKETS,
    giveUpMs: GIVE_UP_MS,
    drainSeconds: 2,
  })
  const after = await getJson(port, '/__stats')
  await stopServer(child)
  // The 4x step's steady state; handler runs over the whole run (the server cannot tell the steps apart).
  const s = summarize(run, STEP_SECONDS * 1000 + SETTLE_SECONDS * 1000, 2 * STEP_SECONDS * 1000, GIVE_UP_MS)
  const runs = after.runs - before.runs
  const wasted = after.wasted - before.wasted
  return {
    contender: name,
    goodput: s.goodputPerSecond,
    shedRate: s.shedRate,
    gaveUp: s.errorRate,
    p99: s.p99,
    runs,
    wasted,
    wastedShare: runs > 0 ? wasted / runs : 0,
    shedDeadline: after.shedDeadline,
  }
}

export async function run() {
  const loadBefore = os.loadavg()[0]
  console.log(`Machine: ${machine()}`)
  console.log(`Handler: ${CPU_MS} ms CPU + ${WAIT_MS} ms wait; 1 process; clients give up after ${GIVE_UP_MS} ms`)
  const capacity = await measureCapacity()
  console.log(`Measured capacity: ${capacity.toFixed(0)} req/s`)
  const contenders = [
    ['none', 'none'],
    ['deadline shedding alone', 'deadlines'],
    ['bulwark BbrLimiter', 'bulwark'],
    ['bulwark BbrLimiter + deadlines', 'bulwark-deadlines'],
  ]
  const rows = []
  for (const [name, mode] of contenders) {
    process.stdout.write(`running ${name}...`)
    rows.push(await runContender(name, mode, capacity))
    console.log(' done')
  }
  const lines = [
    '### Deadlines: clients that give up after 1 s, at 4x',
    '',
    `${machineLine(loadBefore)}. Handler ${CPU_MS} ms CPU + ${WAIT_MS} ms wait in one process, measured capacity ${capacity.toFixed(0)} req/s; an open-loop generator on the same cores through a pool of ${SOCKETS} connections, ${STEP_SECONDS} s at 1x then ${STEP_SECONDS} s at 4x. Each client gives up ${GIVE_UP_MS} ms after its request was due and sends its deadline in \`x-request-deadline\` (read with \`deadline: { absolute: true }\`: client and server share the host's clock). Goodput: answers received within that second, per second of the 4x step. Wasted: handler runs (over the whole run) that finished after their client had left.`,
    '',
    ...table(
      [
        'contender',
        'goodput/s at 4x',
        'goodput % of capacity',
        'p99 ms (answered)',
        'refused %',
        'given up %',
        'handler runs',
        'wasted runs',
        'wasted %',
        'refused by deadline',
      ],
      rows.map((r) => [
        r.contender,
        fmt(r.goodput),
        fmt((100 * r.goodput) / capacity),
        fmt(r.p99, 0, 'gave up'),
        fmt(100 * r.shedRate, 1),
        fmt(100 * r.gaveUp, 1),
        String(r.runs),
        String(r.wasted),
        fmt(100 * r.wastedShare, 1),
        String(r.shedDeadline),
      ]),
    ),
    '',
  ]
  writeResults('deadlines', lines, { capacity, cpuMs: CPU_MS, waitMs: WAIT_MS, giveUpMs: GIVE_UP_MS, rows })
}

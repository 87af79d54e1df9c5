// Clients that never read (issue 32, docs/guide/trust.md): the CPU-bound cluster behind bulwark's httpGuard, driven
// by the lean generator at 1x and 3x of its measured capacity, once alone and once beside SLOW_CLIENTS connections
// that each pipeline PIPELINED requests for an 8 MiB answer (a request like any other, but for its answer's size)
// and never read one. Two contenders share the limiter and
// the handler: httpGuard as it is (a token goes back when the handler ends its answer), and the same limiter with
// its token released when the answer has reached the kernel, as the adapters of 0.x did. The goal: the other
// clients' goodput with the slow readers is within 5 % of their goodput without them. The limiter's in flight at
// each step's end says what the slow readers held. Writes bench/results/overload-slow-readers.{md,json};
// CAPACITY=<req/s> skips the measurement, CONTENDERS=<regex> runs the matching contenders and writes nothing.
//   npm run bench:overload -- slow-readers
import { createRequire } from 'module'
import * as net from 'net'
import * as os from 'os'
import { getJson, stopServer } from '../lib/processes.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'
import { measureCapacity, startCluster } from './cpu-bound.mjs'

const require = createRequire(import.meta.url)
const { runLeanLoad } = require('../../lib/lean-load.cjs')
const { summarize } = require('../../lib/open-loop.cjs')
const STEP_SECONDS = Number(process.env.STEP_SECONDS ?? 8)
const SETTLE_SECONDS = 2
const SLO_MS = 500
const LOADS = [1, 3]
const SLOW_CLIENTS = Number(process.env.SLOW_CLIENTS ?? 16)
const PIPELINED = 2
const BIG_BYTES = 8 << 20 // 16 MiB a connection: more than loopback's socket buffers take
const GUARD = 'httpGuard'
const AT_FLUSH = 'released at flush (0.x)'
const ONLY = process.env.CONTENDERS ? new RegExp(process.env.CONTENDERS) : undefined

/** Opens the slow readers: each pipelines its requests for /big and reads nothing. Returns a closer. */
function openSlowReaders(port) {
  const request = `GET /big HTTP/1.1\r\nhost: slow\r\n\r\n`.repeat(PIPELINED)
  const sockets = Array.from({ length: SLOW_CLIENTS }, () => {
    const socket = net.connect(port, '127.0.0.1').on('error', () => undefined)
    socket.pause()
    socket.write(request)
    return socket
  })
  return () => sockets.forEach((s) => s.destroy())
}

async function runOnce(contender, mode, capacity, withSlowReaders) {
  const { child, port } = await startCluster(mode, { BIG_BYTES: String(BIG_BYTES) })
  const step = STEP_SECONDS * 1000
  const closers = []
  const inFlight = []
  const timers = LOADS.flatMap((_, i) => [
    setTimeout(() => withSlowReaders && closers.push(openSlowReaders(port)), i * step),
    setTimeout(
      async () => {
        inFlight[i] = (await getJson(port, '/__stats').catch(() => undefined))?.inFlight
        closers.shift()?.()
      },
      (i + 1) * step - 100,
    ),
  ])
  const run = await runLeanLoad({
    port,
    schedule: LOADS.map((load) => ({ rate: load * capacity, seconds: STEP_SECONDS })),
    criticalEvery: 10,
    drainSeconds: 3,
  })
  timers.forEach(clearTimeout)
  closers.forEach((close) => close())
  await stopServer(child)
  return LOADS.map((load, i) => ({
    contender,
    load,
    slowReaders: withSlowReaders,
    inFlight: inFlight[i],
    ...summarize(run, i * step + SETTLE_SECONDS * 1000, (i + 1) * step, SLO_MS),
  }))
}

export async function run() {
  const before = os.loadavg()[0]
  const capacity = Number(process.env.CAPACITY) || (await measureCapacity())
  console.log(`Capacity: ${capacity.toFixed(0)} req/s${process.env.CAPACITY ? ' (given)' : ' (measured)'}`)
  const rows = []
  for (const [contender, mode] of [
    [GUARD, 'guard'],
    [AT_FLUSH, 'guard-at-flush'],
  ].filter(([name]) => ONLY === undefined || ONLY.test(name))) {
    for (const slow of [false, true]) {
      process.stdout.write(`running ${contender}${slow ? ', with slow readers' : ''}...`)
      rows.push(...(await runOnce(contender, mode, capacity, slow)))
      console.log(' done')
    }
  }
  const after = os.loadavg()[0]
  const alone = (r) => rows.find((x) => x.contender === r.contender && x.load === r.load && !x.slowReaders)
  const share = (r) => r.goodputPerSecond / alone(r).goodputPerSecond
  const lines = [
    '### Overload: clients that never read',
    '',
    `${machineLine(before, after)}. The CPU-bound cluster (2 workers, one BbrLimiter shared) behind bulwark's httpGuard, measured capacity ${capacity.toFixed(0)} req/s, steps of ${STEP_SECONDS} s at 1x and 3x (the first ${SETTLE_SECONDS} s of each left out), 10 % critical, SLO ${SLO_MS} ms, through the lean generator (raw keep-alive sockets, on the same 2 cores). With slow readers, ${SLOW_CLIENTS} more connections each pipeline ${PIPELINED} requests for an answer of ${BIG_BYTES >> 20} MiB (costing what any request costs) when a step begins, and never read. "Released at flush" is the same limiter whose token goes back when the answer has reached the kernel, as the adapters of 0.x did.`,
    '',
    ...table(
      [
        'contender',
        'load',
        'slow readers',
        'goodput/s',
        'goodput vs. without slow readers',
        'admitted p99 ms',
        'shed %',
        'critical ok %',
        'in flight at the step’s end',
      ],
      rows.map((r) => [
        r.contender,
        `${r.load}x`,
        r.slowReaders ? SLOW_CLIENTS : 'none',
        fmt(r.goodputPerSecond),
        r.slowReaders ? `${fmt(100 * share(r), 1)} %` : '',
        fmt(r.p99, 0, 'timeout'),
        fmt(100 * r.shedRate, 1),
        fmt(100 * r.criticalSuccess, 1),
        r.inFlight ?? '?',
      ]),
    ),
    '',
  ]
  const guarded = rows.filter((r) => r.contender === GUARD && r.slowReaders)
  if (ONLY !== undefined || guarded.length === 0)
    return console.log([...lines, '(CONTENDERS set: nothing written)'].join('\n'))
  lines.push(
    ...goalsTable(
      'goal (httpGuard)',
      guarded.map((r) => [
        `goodput of the other clients at ${r.load}x within 5 % of the run without slow readers`,
        share(r) >= 0.95,
        `${fmt(100 * share(r), 1)} %`,
      ]),
    ),
  )
  writeResults('overload-slow-readers', lines, {
    capacity,
    stepSeconds: STEP_SECONDS,
    slowClients: SLOW_CLIENTS,
    pipelined: PIPELINED,
    bigBytes: BIG_BYTES,
    loadBefore: before,
    loadAfter: after,
    rows,
  })
}

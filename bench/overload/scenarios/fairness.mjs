// The noisy-neighbour scenario (issue 16, part 1): the CPU-bound cluster at 4x its capacity, offered by one noisy
// tenant (3.5x) and 20 light tenants (0.5x together, each 1/40 of capacity: under its fair share of 1/21), with
// bulwark's BbrLimiter shedding blindly and with fairness, side by side. Writes bench/results/overload-fairness.*.
import * as os from 'os'
import { createRequire } from 'module'
import { stopServer } from '../lib/processes.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'
import { measureCapacity, startCluster } from './cpu-bound.mjs'

const require = createRequire(import.meta.url)
const { summarize } = require('../../lib/open-loop.cjs')
// The lean generator (raw keep-alive sockets): node:http's client would spend much of the 2 cores' CPU on sending 4x,
// CPU the cluster's capacity was measured with.
const { runLeanLoad } = require('../../lib/lean-load.cjs')
const SECONDS = Number(process.env.STEP_SECONDS ?? 10)
const SETTLE_SECONDS = 2
// The gateway served an ordinary load before the flood, as in the cpu-bound and ten-x scenarios: how fast a cold
// limiter learns is the cpu-bound scenario's "sheds within 2 s"; this one measures sharing under a standing flood.
const WARM_SECONDS = Number(process.env.WARM_SECONDS ?? 4)
const SLO_MS = 500
const LIGHT_TENANTS = 20

// Of every 8 requests, 7 are the noisy tenant's and 1 a light tenant's, in turn: 3.5x and 0.5x of 4x.
const isLight = (i) => i % 8 === 7
const tenantOf = (i) => (isLight(i) ? `light-${((i - 7) / 8) % LIGHT_TENANTS}` : 'noisy')

async function runContender(name, fair, capacity) {
  const { child, port } = await startCluster('bulwark', { FAIR: fair ? '1' : '0' })
  const run = await runLeanLoad({
    port,
    path: (i) => `/t/${tenantOf(i)}`,
    schedule: [
      { rate: 0.5 * capacity, seconds: WARM_SECONDS },
      { rate: 4 * capacity, seconds: SECONDS },
    ],
    criticalEvery: 0,
    drainSeconds: 3,
  })
  await stopServer(child)
  const from = (WARM_SECONDS + SETTLE_SECONDS) * 1000
  const to = (WARM_SECONDS + SECONDS) * 1000
  const light = summarize(run, from, to, SLO_MS, isLight)
  const noisy = summarize(run, from, to, SLO_MS, (i) => !isLight(i))
  const all = summarize(run, from, to, SLO_MS)
  return { name, light, noisy, all }
}

export async function run() {
  const before = os.loadavg()[0]
  // CAPACITY=<req/s> skips the measurement; CONTENDERS=<regex> runs the matching contenders only and writes nothing
  // (A/B runs of two builds, with the cluster's BULWARK_DIST).
  const capacity = Number(process.env.CAPACITY) || (await measureCapacity())
  console.log(`Capacity: ${capacity.toFixed(0)} req/s${process.env.CAPACITY ? ' (given)' : ' (measured)'}`)
  const only = process.env.CONTENDERS ? new RegExp(process.env.CONTENDERS) : undefined
  const rows = []
  for (const [name, fair] of [
    ['BbrLimiter, blind shedding', false],
    ['BbrLimiter with fairness', true],
  ].filter(([name]) => only === undefined || only.test(name))) {
    process.stdout.write(`running ${name}...`)
    rows.push(await runContender(name, fair, capacity))
    console.log(' done')
  }
  const after = os.loadavg()[0]
  const pct = (part, whole) => fmt((100 * part) / whole, 1)
  const lines = [
    '### Overload: a noisy tenant beside 20 light ones, at 4x capacity',
    '',
    `${machineLine(before, after)}. The CPU-bound cluster (2 workers) at 4x its measured capacity of ${capacity.toFixed(0)} req/s for ${SECONDS} s after ${WARM_SECONDS} s at 0.5x (the first ${SETTLE_SECONDS} s of the flood left out): one tenant sends 3.5x, 20 tenants 0.5x together, through the lean generator (raw keep-alive sockets, on the same 2 cores). Goodput counts answers within ${SLO_MS} ms.`,
    '',
    ...table(
      [
        'contender',
        'light tenants: goodput % of asked',
        'noisy tenant: goodput/s',
        'total goodput % of capacity',
        'admitted p99 ms',
      ],
      rows.map((r) => [
        r.name,
        pct(r.light.goodputPerSecond, r.light.offeredPerSecond),
        fmt(r.noisy.goodputPerSecond),
        pct(r.all.goodputPerSecond, capacity),
        fmt(r.all.p99, 0, 'timeout'),
      ]),
    ),
    '',
  ]
  const f = rows.find((r) => r.name === 'BbrLimiter with fairness')
  if (f === undefined) return console.log([...lines, '(CONTENDERS set: nothing written)'].join('\n'))
  lines.push(
    ...goalsTable('goal (fairness)', [
      [
        'light tenants get >= 95 % of what they ask',
        f.light.goodputPerSecond >= 0.95 * f.light.offeredPerSecond,
        `${pct(f.light.goodputPerSecond, f.light.offeredPerSecond)} %`,
      ],
      [
        'total goodput >= 90 % of capacity',
        f.all.goodputPerSecond >= 0.9 * capacity,
        `${pct(f.all.goodputPerSecond, capacity)} %`,
      ],
    ]),
  )
  if (only !== undefined) return console.log([...lines, '(CONTENDERS set: nothing written)'].join('\n'))
  writeResults('overload-fairness', lines, { capacity, seconds: SECONDS, loadBefore: before, loadAfter: after, rows })
}

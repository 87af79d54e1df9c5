// Two upstreams behind one gateway, one of which saturates: upstream A and upstream B each serve 8 requests at a
// time, 20 ms each (400 req/s), and queue the rest. The gateway forwards /a to A and /b to B through undici. After
// 3 s of light load, A is offered 3x its capacity while B stays at 0.5x, for STEP_SECONDS (the first 2 s are the
// transition). Contenders: no protection; httpGuard alone (inbound: one limit for the whole gateway, so A's queue
// costs B too); httpGuard with undiciGuard (an adaptive bulkhead per origin). The healthy upstream must keep its
// goodput. Writes bench/results/overload-two-upstreams.{md,json}.
import { createRequire } from 'module'
import * as os from 'os'
import { machine } from '../../harness.mjs'
import { getJson, startServer, stopServer } from '../lib/processes.mjs'
import { watchUpstream } from '../lib/upstream-account.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'

const require = createRequire(import.meta.url)
const { summarize } = require('../../lib/open-loop.cjs')
const { runLeanLoad } = require('../../lib/lean-load.cjs')

const CAPACITY = 400 // each upstream: 8 at a time, 20 ms each
const STEP_SECONDS = Number(process.env.STEP_SECONDS ?? 10)
const WARM_SECONDS = 3
const SETTLE_SECONDS = 2
const SLO_MS = 500
const A_LOAD = 3
const B_LOAD = 0.5
const CONTENDERS = [
  ['none', { MODE: 'none', OUTBOUND: 'undici' }],
  ['httpGuard (inbound only)', { MODE: 'bulwark', OUTBOUND: 'undici' }],
  ['httpGuard + undiciGuard (a bulkhead per origin)', { MODE: 'bulwark', OUTBOUND: 'undici-guard' }],
]

// One request in PERIOD goes to B; the rest to A. During the overload that is A at 3x and B at 0.5x.
const PERIOD = (A_LOAD + B_LOAD) / B_LOAD
const toB = (i) => i % PERIOD === 0

async function runOne(name, env) {
  const a = await startServer('upstream.cjs', {})
  const b = await startServer('upstream.cjs', {})
  const gateway = await startServer('gateway.cjs', {
    UPSTREAMS: JSON.stringify({ '/a': a.port, '/b': b.port }),
    ...env,
  })
  const total = (A_LOAD + B_LOAD) * CAPACITY
  // The warm-up sends CAPACITY requests a second in the same proportions: A below its capacity, B lightly.
  const schedule = [
    { rate: CAPACITY, seconds: WARM_SECONDS },
    { rate: total, seconds: STEP_SECONDS },
  ]
  const from = (WARM_SECONDS + SETTLE_SECONDS) * 1000
  const to = (WARM_SECONDS + STEP_SECONDS) * 1000
  const accountA = watchUpstream(a.port, from, to)
  const run = await runLeanLoad({
    port: gateway.port,
    schedule,
    path: (i) => (toB(i) ? '/b/item' : '/a/item'),
    criticalEvery: 0,
    drainSeconds: 3,
  })
  const stats = await getJson(gateway.port, '/__stats')
  const upstreamA = await accountA.result()
  await Promise.all([gateway, a, b].map((s) => stopServer(s.child)))
  return {
    contender: name,
    a: summarize(run, from, to, SLO_MS, (i) => !toB(i)),
    b: summarize(run, from, to, SLO_MS, toB),
    capacityA: Math.min(CAPACITY, upstreamA.capacity),
    capped: run.generator.capped,
    inbound: stats.inbound,
    outbound: stats.outbound,
  }
}

export async function run() {
  const loadAtStart = os.loadavg()[0]
  console.log(`Machine: ${machine()}`)
  const rows = []
  for (const [name, env] of CONTENDERS) {
    process.stdout.write(`${name}... `)
    const r = await runOne(name, env)
    rows.push(r)
    console.log(`B's goodput ${fmt(r.b.goodputPerSecond)}/s of ${fmt(r.b.offeredPerSecond)}/s offered`)
  }
  const cells = (s) => [
    fmt(s.offeredPerSecond),
    fmt(s.goodputPerSecond),
    fmt(s.p99, 0, 'timeout'),
    fmt(100 * s.shedRate, 1),
    String(s.unanswered),
  ]
  const lines = [
    '### Overload, I/O-bound: two upstreams, one saturating',
    '',
    `${machineLine(loadAtStart)}. Upstreams A and B each serve 8 requests at a time, 20 ms each (${CAPACITY} req/s), and queue the rest; a node:http gateway forwards /a to A and /b to B through undici (one process). After ${WARM_SECONDS} s of light load, A is offered ${A_LOAD}x its capacity and B ${B_LOAD}x, for ${STEP_SECONDS} s, of which the last ${STEP_SECONDS - SETTLE_SECONDS} s are measured. Goodput: answered 200 within ${SLO_MS} ms. A's capacity: ${CAPACITY} req/s, or what A measured it could serve in the window if less (its timers fire late on a busy machine). The lean open-loop generator runs on the same 2 cores.`,
    '',
    ...table(
      [
        'contender',
        'A offered/s',
        'A goodput/s',
        'A p99 ms',
        'A shed %',
        'A unanswered',
        'B offered/s',
        'B goodput/s',
        'B p99 ms',
        'B shed %',
        'B unanswered',
      ],
      rows.map((r) => [r.contender, ...cells(r.a), ...cells(r.b)]),
    ),
    '',
  ]
  const capped = rows.filter((r) => r.capped)
  if (capped.length > 0) {
    lines.push(`The generator fell behind: ${capped.map((r) => `${r.contender}: ${r.capped}`).join('; ')}.`, '')
  }
  const full = rows[2]
  lines.push(
    ...goalsTable('goal (httpGuard + undiciGuard)', [
      [
        'the healthy upstream keeps >= 95 % of its goodput',
        full.b.goodputPerSecond >= 0.95 * full.b.offeredPerSecond,
        `${fmt((100 * full.b.goodputPerSecond) / full.b.offeredPerSecond)} % (${fmt(full.b.goodputPerSecond)} of ${fmt(full.b.offeredPerSecond)}/s)`,
      ],
      [
        'the saturated upstream gives >= 90 % of its capacity',
        full.a.goodputPerSecond >= 0.9 * full.capacityA,
        `${fmt((100 * full.a.goodputPerSecond) / full.capacityA)} % (${fmt(full.a.goodputPerSecond)} of ${fmt(full.capacityA)}/s)`,
      ],
      [
        'nothing times out',
        full.a.unanswered + full.b.unanswered === 0,
        `${full.a.unanswered + full.b.unanswered} unanswered`,
      ],
    ]),
  )
  writeResults('overload-two-upstreams', lines, { capacity: CAPACITY, rows })
}

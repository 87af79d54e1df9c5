// 10x, measured (issue 16, part 6): the CPU-bound cluster driven by the lean generator (bench/lib/lean-load.cjs, raw
// keep-alive sockets) at 0.5x, 4x and 10x of its measured capacity, then back to 0.5x, unprotected and with
// bulwark's BbrLimiter. Critical traffic is a fixed rate, 10 % of capacity at every step (an operator's critical
// traffic is a bounded share of what the host serves, not of what a flood offers); the old mix, 10 % of the offered
// requests (at 10x as much critical traffic as the host can serve), runs beside it for bulwark. The output says what
// the generator achieved against what it was asked (sent/s against offered/s), and what capped it if it fell
// behind. Under the table, for bulwark at 4x and 10x, what held its goodput, and what its refusals cost the workers:
// a refusal's CPU is measured after the steps, on the cluster refusing every request at the 4x rate (the same shed()
// as bulwark's refusals; bench/overload/lib/request-cost.mjs). A refusal is node:http's and the kernel's work, which
// grows on a slower host while the handler's CPU_MS does not, so on a slow host the 4x step's refusals alone can cost
// more than the goal's 5 %. Writes bench/results/overload-10x.{md,json}.
//   npm run bench:overload -- ten-x
import * as os from 'os'
import { createRequire } from 'module'
import { cpuSplit, formatSplit, loopShares, sampleCpu, whatCapped } from '../lib/cpu-split.mjs'
import { collectDiagnosis, diagnosisTable, monotonicMs, summariseDiagnosis } from '../lib/diagnosis.mjs'
import { stopServer } from '../lib/processes.mjs'
import { measureRequestCost } from '../lib/request-cost.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'
import { measureCapacity, startCluster } from './cpu-bound.mjs'

const require = createRequire(import.meta.url)
const { runLeanLoad } = require('../../lib/lean-load.cjs')
const { summarize } = require('../../lib/open-loop.cjs')
const STEP_SECONDS = Number(process.env.STEP_SECONDS ?? 8)
const SETTLE_SECONDS = 2
const SLO_MS = 500
/** How long a refusal's cost is measured. */
const REFUSAL_SECONDS = 4
const LOADS = [0.5, 4, 10]
/** Critical traffic as a share of capacity (the fixed rate), and as a share of what is offered (the old mix). */
const CRITICAL_OF_CAPACITY = 0.1
const CRITICAL_OF_OFFERED = 0.1
const FIXED = 'fixed'
const OFFERED = 'offered'
/** Every how many requests one is critical at `load` times capacity, for each mix. */
const criticalEvery = (mix, load) =>
  mix === FIXED ? Math.round(load / CRITICAL_OF_CAPACITY) : Math.round(1 / CRITICAL_OF_OFFERED)
// DIAG=1: the server records where each request waited (bench/overload/lib/diagnosis.mjs); the run writes that
// table, per contender and step (those CONTENDERS picks), to bench/results/overload-10x-wait.{md,json} instead of
// overload-10x (the stamps cost the generator an allocation per request).
const DIAG = process.env.DIAG === '1'
// CONTENDERS=<regex>: only the matching contenders run (the unloaded p99 is then the first one's at 0.5x), and
// nothing is written: for A/B runs.
const diagnosis = []
const BULWARK = 'bulwark BbrLimiter'
const BULWARK_OLD_MIX = 'bulwark BbrLimiter, old mix'
const ONLY = process.env.CONTENDERS ? new RegExp(process.env.CONTENDERS) : undefined

async function runContender(name, mode, mix, capacity) {
  const { child, port } = await startCluster(mode, DIAG ? { DIAG: '1' } : {})
  const schedule = [...LOADS, 0.5].map((load) => ({
    rate: load * capacity,
    seconds: STEP_SECONDS,
    criticalEvery: criticalEvery(mix, load),
  }))
  const step = STEP_SECONDS * 1000
  // The CPU split of each step's measured part: a sample where it begins and where it ends.
  const samples = []
  const timers = LOADS.flatMap((_, i) =>
    [i * step + SETTLE_SECONDS * 1000, (i + 1) * step].map((at, j) =>
      setTimeout(() => (samples[2 * i + j] = sampleCpu(child.pid)), at),
    ),
  )
  const t0 = monotonicMs()
  const run = await runLeanLoad({ port, schedule, drainSeconds: 3, stampSend: DIAG })
  timers.forEach(clearTimeout)
  if (DIAG) {
    const records = await collectDiagnosis(port)
    const steps = LOADS.map((load, i) => ({
      label: `${load}x`,
      fromMs: i * step + SETTLE_SECONDS * 1000,
      toMs: (i + 1) * step,
    }))
    diagnosis.push({ name, rows: summariseDiagnosis(records, t0, steps) })
  }
  const loops = await collectDiagnosis(port, 2, '/__loop').catch(() => [])
  await stopServer(child)
  const sent = run.generator.sentPerSecond
  const rows = LOADS.map((load, i) => {
    const from = i * step + SETTLE_SECONDS * 1000
    const s = summarize(run, from, (i + 1) * step, SLO_MS)
    const seconds = sent.slice(from / 1000, ((i + 1) * step) / 1000)
    const sentPerSecond = seconds.reduce((a, b) => a + b, 0) / seconds.length
    const cpu = cpuSplit(samples[2 * i], samples[2 * i + 1])
    const loop = loopShares(loops, t0 + from, t0 + (i + 1) * step)
    return { contender: name, mix, load, ...s, sentPerSecond, cpu, loop }
  })
  return { rows, capped: run.generator.capped }
}

export async function run() {
  const before = os.loadavg()[0]
  // CAPACITY=<req/s> skips the measurement (A/B runs at one offered rate).
  const capacity = Number(process.env.CAPACITY) || (await measureCapacity())
  console.log(`Capacity: ${capacity.toFixed(0)} req/s${process.env.CAPACITY ? ' (given)' : ' (measured)'}`)
  const all = []
  const capped = []
  // bulwark first: the unprotected run's collapse (every socket held for seconds) must not spill into its run.
  const contenders = [
    [BULWARK, 'bulwark', FIXED],
    [BULWARK_OLD_MIX, 'bulwark', OFFERED],
    ['none', 'none', FIXED],
  ].filter(([name]) => ONLY === undefined || ONLY.test(name))
  for (const [name, mode, mix] of contenders) {
    process.stdout.write(`running ${name}...`)
    const r = await runContender(name, mode, mix, capacity)
    all.push(...r.rows)
    if (r.capped) capped.push(`${name}: ${r.capped}`)
    console.log(' done')
  }
  // A refusal's CPU, alone: the cluster refusing every request (the same shed() as bulwark's) at the 4x rate.
  const refusal = await measureRequestCost(() => startCluster('static', { STATIC_LIMIT: '0' }), {
    rate: 4 * capacity,
    seconds: REFUSAL_SECONDS,
  })
  console.log(
    `A refusal: ${refusal.workers.toFixed(0)} us of the workers' CPU (${(100 * refusal.ok).toFixed(1)} % answered 200)`,
  )
  const after = os.loadavg()[0]
  // Unloaded: the unprotected server at half its capacity (as in the cpu-bound scenario).
  const unloaded = all.find((r) => r.contender === 'none' && r.load === 0.5) ?? all.find((r) => r.load === 0.5)
  const unloadedP99 = unloaded.p99
  const lines = [
    '### Overload at 10x: the lean generator',
    '',
    `${machineLine(before, after)}. The CPU-bound cluster (2 workers), measured capacity ${capacity.toFixed(0)} req/s, steps of ${STEP_SECONDS} s (the first ${SETTLE_SECONDS} s of each left out), SLO ${SLO_MS} ms. The generator (raw keep-alive sockets) runs on the same 2 cores; "sent/s" is what it achieved of "offered/s".`,
    '',
    `Critical requests are a fixed rate, ${fmt(100 * CRITICAL_OF_CAPACITY)} % of capacity (${fmt(CRITICAL_OF_CAPACITY * capacity)} req/s) at every step: an operator's critical traffic is a bounded share of what the host serves, whatever a flood adds to it. The goals are judged on that mix. The mix of earlier runs, ${fmt(100 * CRITICAL_OF_OFFERED)} % of the offered requests, is reported beside it ("old mix"): at 10x its critical requests alone are as many as the host can serve, and refusing the other nine in ten costs CPU too, so no limiter could serve 99 % of them.`,
    '',
    ...table(
      [
        'contender',
        'load',
        'offered/s',
        'critical/s',
        'sent/s',
        'goodput/s',
        'goodput % of capacity',
        'p50 ms',
        'admitted p99 ms',
        'shed %',
        'critical ok %',
        "workers' loop busy / on CPU %; generator, others, idle (% of a core)",
      ],
      all.map((r) => [
        r.contender,
        `${r.load}x`,
        fmt(r.offeredPerSecond),
        fmt(r.offeredPerSecond / criticalEvery(r.mix, r.load)),
        fmt(r.sentPerSecond),
        fmt(r.goodputPerSecond),
        fmt((100 * r.goodputPerSecond) / capacity),
        fmt(r.p50, 0, 'timeout'),
        fmt(r.p99, 0, 'timeout'),
        fmt(100 * r.shedRate, 1),
        fmt(100 * r.criticalSuccess, 1),
        formatSplit(r.cpu, r.loop),
      ]),
    ),
    '',
    capped.length > 0
      ? `The generator fell behind its schedule: ${capped.join('; ')}.`
      : 'The generator kept to its schedule at every step (send lag p99 <= 20 ms).',
    '',
  ]
  const at = (load, name = BULWARK) => all.find((r) => r.contender === name && r.load === load)
  const [x4, x10, old10] = [at(4), at(10), at(10, BULWARK_OLD_MIX)]
  const pct = (r) => `${fmt((100 * r.goodputPerSecond) / capacity)} %`
  for (const r of [x4, x10]) {
    const cause = r && whatCapped(r.cpu, r.loop)
    const refusedPerSecond = r === undefined ? 0 : r.offeredPerSecond * r.shedRate
    const workers = r?.cpu?.workers.length ?? 0 // the cluster's worker processes, as /proc listed them
    const cost =
      refusedPerSecond === 0 || workers === 0
        ? ''
        : ` Its ${fmt(refusedPerSecond)} refusals a second took about ${fmt((refusedPerSecond * refusal.workers) / 1e4 / workers)} % of the workers' time, at ${fmt(refusal.workers)} us of CPU each (measured after the steps: the cluster refusing every request at the 4x rate).`
    if (cause !== undefined) lines.push(`bulwark at ${r.load}x, ${pct(r)} of capacity: ${cause}.${cost}`, '')
  }
  if (x10 !== undefined)
    lines.push(
      ...goalsTable('goal (bulwark)', [
        ['goodput at 10x >= 90 % of capacity', x10.goodputPerSecond >= 0.9 * capacity, pct(x10)],
        ['goodput at 4x >= 95 % of capacity', x4.goodputPerSecond >= 0.95 * capacity, pct(x4)],
        [
          'admitted p99 at 10x <= 2.5x unloaded p99',
          x10.p99 <= 2.5 * unloadedP99,
          `${fmt(x10.p99)} ms vs 2.5 x ${fmt(unloadedP99)} ms`,
        ],
        ['critical success at 10x >= 99 %', x10.criticalSuccess >= 0.99, `${fmt(100 * x10.criticalSuccess, 1)} %`],
      ]),
    )
  if (old10 !== undefined)
    lines.push(
      '',
      `With the old mix (critical ${fmt(100 * CRITICAL_OF_OFFERED)} % of offered): critical success at 10x ${fmt(100 * old10.criticalSuccess, 1)} %, goodput ${pct(old10)}, admitted p99 ${fmt(old10.p99)} ms.`,
    )
  if (DIAG) writeDiagnosis(capacity, before, after)
  if (ONLY !== undefined || DIAG) {
    for (const { name, rows } of diagnosis) console.log(`\n${name}:\n${diagnosisTable(rows).join('\n')}`)
    return console.log([...lines, '', '(CONTENDERS or DIAG set: overload-10x not written)'].join('\n'))
  }
  writeResults('overload-10x', lines, {
    capacity,
    stepSeconds: STEP_SECONDS,
    loadBefore: before,
    loadAfter: after,
    rows: all,
    capped,
    refusalUs: refusal.workers,
  })
}

function writeDiagnosis(capacity, before, after) {
  const lines = [
    '### Where admitted requests wait at 10x',
    '',
    `${machineLine(before, after)}. The ten-x run (capacity ${capacity.toFixed(0)} req/s) with DIAG=1: every request carries its send time (the host's monotonic clock), and the cluster's workers record when its handler started, how long the loop turn had run then, and its time in the handler (CPU, then the 20 ms wait, then the loop's delay in answering). p50 / p99 in ms, over each step less its first 2 s.`,
    '',
  ]
  for (const { name, rows } of diagnosis) lines.push(`${name}:`, '', ...diagnosisTable(rows), '')
  writeResults('overload-10x-wait', lines, { capacity, loadBefore: before, loadAfter: after, diagnosis })
}

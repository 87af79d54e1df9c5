// The square-wave burst scenario (issue 16, parts 2 and 6): bursts of BURST x a server's capacity lasting BURST_MS,
// each followed by LOW x for LOW_MS, offered to bulwark shedding at once and with a short queue (maxWait MAX_WAIT
// ms), side by side, on two servers (SERVERS picks some): the CPU-bound cluster, whose event loop is the bottleneck
// (both run the handler through limiter.execute()), and the I/O-bound gateway of the upstream scenario, whose
// upstream is (httpGuard with its defaults, and with maxWait). Each server's unloaded p99 (0.5x, no queue) sets its
// admitted-latency bound. Writes bench/results/overload-burst.{md,json}.
//   npm run bench:overload -- burst
import * as os from 'os'
import { createRequire } from 'module'
import { stopServer } from '../lib/processes.mjs'
import { fmt, goalsTable, machineLine, table, writeResults } from '../lib/report.mjs'
import { measureCapacity, startCluster } from './cpu-bound.mjs'
import { CONCURRENCY, NOMINAL, SERVICE_MS, WARM_SECONDS, startPair } from './upstream.mjs'

const require = createRequire(import.meta.url)
const { runLeanLoad } = require('../../lib/lean-load.cjs')
const { summarize } = require('../../lib/open-loop.cjs')
const SECONDS = Number(process.env.STEP_SECONDS ?? 12)
const SETTLE_SECONDS = 2
const SLO_MS = 500
const BURST = Number(process.env.BURST ?? 1.2)
const BURST_MS = Number(process.env.BURST_MS ?? 200)
const LOW = Number(process.env.LOW ?? 0.7)
const LOW_MS = Number(process.env.LOW_MS ?? 300)
const MAX_WAIT = Number(process.env.MAX_WAIT ?? 50)
const P99_BOUND = 2.5 // x the unloaded p99
const ROW_FIELDS = [
  'name',
  'maxWait',
  'shed',
  'shedRate',
  'offeredPerSecond',
  'goodputPerSecond',
  'p50',
  'p99',
  'criticalSuccess',
]
// Contenders take turns, ROUNDS times each in alternating order, so that a busy machine's noise falls on both.
const ROUNDS = Number(process.env.ROUNDS ?? 3)

/**
 * The servers: where each one's capacity comes from, how long it warms up at 0.5x before a run (the latency rule
 * learns its unloaded latency first), and how it starts with a given maxWait (0: shedding at once).
 */
const SERVERS = {
  cpu: {
    title: 'The CPU-bound cluster: the event loop is the bottleneck',
    capacity: async () => Number(process.env.CAPACITY) || (await measureCapacity()),
    describe: (capacity) => `the CPU-bound cluster (2 workers, measured capacity ${fmt(capacity)} req/s)`,
    warmSeconds: 0,
    async start(maxWait) {
      const { child, port } = await startCluster('bulwark', { MAX_WAIT: String(maxWait) })
      return { port, stop: () => stopServer(child) }
    },
  },
  gateway: {
    title: 'The I/O-bound gateway: the upstream is the bottleneck',
    capacity: async () => NOMINAL,
    describe: (capacity) =>
      `the gateway of the upstream scenario (a node:http proxy with httpGuard's defaults, in front of an upstream that serves ${CONCURRENCY} requests at a time, ${SERVICE_MS} ms each: ${fmt(capacity)} req/s), warmed up for ${WARM_SECONDS} s at 0.5x before each run`,
    warmSeconds: WARM_SECONDS,
    async start(maxWait) {
      const pair = await startPair({ MODE: 'bulwark', MAX_WAIT: String(maxWait) })
      return { port: pair.gateway.port, stop: pair.stop }
    },
  },
}
const WANTED = (process.env.SERVERS ?? 'cpu,gateway').split(',')

function squareWave(capacity, seconds) {
  const schedule = []
  for (let t = 0; t < seconds * 1000; t += BURST_MS + LOW_MS) {
    schedule.push({ rate: BURST * capacity, seconds: BURST_MS / 1000 })
    schedule.push({ rate: LOW * capacity, seconds: LOW_MS / 1000 })
  }
  return schedule
}

async function runOnce(server, capacity, maxWait, schedule) {
  const warm = server.warmSeconds > 0 ? [{ rate: 0.5 * capacity, seconds: server.warmSeconds }] : []
  const { port, stop } = await server.start(maxWait)
  const run = await runLeanLoad({ port, schedule: [...warm, ...schedule], criticalEvery: 10, drainSeconds: 3 })
  await stop()
  return run
}

/** The runs of one contender as one: their requests laid end to end. */
function joined(runs) {
  const keys = ['due', 'latency', 'status', 'critical', 'inBurst']
  const out = { durationMs: 0 }
  for (const key of keys) out[key] = new runs[0][key].constructor(runs.reduce((n, r) => n + r[key].length, 0))
  let at = 0
  for (const run of runs) {
    for (const key of keys) out[key].set(key === 'due' ? run.due.map((d) => d + out.durationMs) : run[key], at)
    at += run.due.length
    out.durationMs += run.durationMs
  }
  return out
}

function summary(name, maxWait, runs, warmSeconds) {
  // Each run's warm-up and settling seconds left out.
  const kept = runs.map((run) => {
    const from = (warmSeconds + SETTLE_SECONDS) * 1000
    const keep = Array.from(run.due, (d, i) => (d >= from ? i : -1)).filter((i) => i >= 0)
    const pick = (a) => a.constructor.from(keep, (i) => a[i])
    const waveStart = warmSeconds * 1000
    return {
      ...run,
      // Whether each request was due in a burst or in a low phase (the wave starts with a burst).
      inBurst: Uint8Array.from(keep, (i) => ((run.due[i] - waveStart) % (BURST_MS + LOW_MS) < BURST_MS ? 1 : 0)),
      due: pick(run.due).map((d) => d - from),
      latency: pick(run.latency),
      status: pick(run.status),
      critical: pick(run.critical),
      durationMs: run.durationMs - from,
    }
  })
  const all = joined(kept)
  const s = summarize(all, 0, all.durationMs, SLO_MS)
  const shed = Array.from(all.status).filter((code) => code === 503).length
  // By phase (where the admitted p99 comes from, and whether shedding runs on into the low phases).
  const phase = (burst) => {
    const include = (i) => all.inBurst[i] === burst
    const part = summarize(all, 0, all.durationMs, SLO_MS, include)
    return { p99: part.p99, shed: all.status.filter((code, i) => code === 503 && include(i)).length }
  }
  const capped = runs.map((r) => r.generator.capped).filter(Boolean)
  return { name, maxWait, ...s, shed, burst: phase(1), low: phase(0), capped: capped.join('; ') || undefined }
}

/** One server: its unloaded p99, then each contender ROUNDS times, taking turns. */
async function measureServer(key) {
  const server = SERVERS[key]
  const capacity = await server.capacity()
  console.log(`${key}: capacity ${capacity.toFixed(0)} req/s`)
  process.stdout.write(`${key}: unloaded (0.5x, no queue)...`)
  const unloadedRun = await runOnce(server, capacity, 0, [{ rate: 0.5 * capacity, seconds: 6 }])
  const unloaded = summary('unloaded', 0, [unloadedRun], server.warmSeconds)
  console.log(` p99 ${fmt(unloaded.p99)} ms`)
  const schedule = squareWave(capacity, SECONDS)
  const contenders = [
    ['bulwark, shedding at once', 0],
    [`bulwark, maxWait ${MAX_WAIT} ms`, MAX_WAIT],
  ]
  const runs = contenders.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of round % 2 === 0 ? [0, 1] : [1, 0]) {
      process.stdout.write(`${key}, round ${round + 1}: ${contenders[c][0]}...`)
      runs[c].push(await runOnce(server, capacity, contenders[c][1], schedule))
      console.log(' done')
    }
  }
  const rows = contenders.map(([name, maxWait], c) => summary(name, maxWait, runs[c], server.warmSeconds))
  return { key, server, capacity, unloadedP99: unloaded.p99, bound: P99_BOUND * unloaded.p99, rows }
}

function serverLines(m) {
  const { server, capacity, unloadedP99, bound, rows } = m
  const lines = [
    `#### ${server.title}`,
    '',
    `The wave offered to ${server.describe(capacity)}. Unloaded p99 (0.5x): ${fmt(unloadedP99)} ms.`,
    '',
    ...table(
      [
        'contender',
        'offered/s',
        '503s',
        '503 %',
        '503s due in bursts / low',
        'goodput/s',
        'admitted p50 ms',
        'admitted p99 ms',
        'p99 due in bursts / low ms',
        'critical ok %',
      ],
      rows.map((r) => [
        r.name,
        fmt(r.offeredPerSecond),
        fmt(r.shed),
        fmt(100 * r.shedRate, 2),
        `${fmt(r.burst.shed)} / ${fmt(r.low.shed)}`,
        fmt(r.goodputPerSecond),
        fmt(r.p50, 0, 'timeout'),
        fmt(r.p99, 0, 'timeout'),
        `${fmt(r.burst.p99, 0, 'timeout')} / ${fmt(r.low.p99, 0, 'timeout')}`,
        fmt(100 * r.criticalSuccess, 1),
      ]),
    ),
    '',
  ]
  const capped = rows.filter((r) => r.capped).map((r) => `${r.name}: ${r.capped}`)
  if (capped.length > 0) lines.push(`The generator fell behind its schedule (${capped.join('; ')}).`, '')
  const [now, queued] = rows
  lines.push(
    ...goalsTable('goal (queue)', [
      ['fewer 503s than shedding at once', queued.shed < now.shed, `${fmt(queued.shed)} vs ${fmt(now.shed)}`],
      [
        `admitted p99 within the same bound (${P99_BOUND}x unloaded p99)`,
        queued.p99 <= bound,
        `${fmt(queued.p99)} ms (at once: ${fmt(now.p99)} ms) vs ${fmt(bound)} ms`,
      ],
    ]),
    '',
  )
  return lines
}

export async function run() {
  const before = os.loadavg()[0]
  const unknown = WANTED.filter((key) => SERVERS[key] === undefined)
  if (unknown.length > 0) throw new Error(`SERVERS: unknown ${unknown.join(', ')} (the servers: cpu, gateway)`)
  const measured = []
  for (const key of WANTED) measured.push(await measureServer(key))
  const after = os.loadavg()[0]
  const lines = [
    '### Bursts: a short queue against shedding at once',
    '',
    `${machineLine(before, after)}. A square wave for ${SECONDS} s (the first ${SETTLE_SECONDS} s left out), ${ROUNDS} runs of each contender taking turns: ${BURST}x capacity for ${BURST_MS} ms, then ${LOW}x for ${LOW_MS} ms; 10 % critical. The lean generator runs on the same 2 cores. Goodput counts answers within ${SLO_MS} ms.`,
    '',
    ...measured.flatMap(serverLines),
  ]
  lines.pop() // the last section's blank line
  // Another build's run (BULWARK_DIST, for A/B pairs) or some servers only are printed, not written.
  if (process.env.BULWARK_DIST !== undefined || process.env.SERVERS !== undefined)
    return console.log([...lines, '', '(BULWARK_DIST or SERVERS set: overload-burst not written)'].join('\n'))
  writeResults('overload-burst', lines, {
    seconds: SECONDS,
    rounds: ROUNDS,
    burst: { BURST, BURST_MS, LOW, LOW_MS, MAX_WAIT },
    loadBefore: before,
    loadAfter: after,
    servers: Object.fromEntries(
      measured.map((m) => [
        m.key,
        {
          capacity: m.capacity,
          unloadedP99: m.unloadedP99,
          rows: m.rows.map((r) => ({
            ...Object.fromEntries(ROW_FIELDS.map((field) => [field, r[field]])),
            dueInBursts: r.burst,
            dueInLow: r.low,
          })),
        },
      ]),
    ),
  })
}

// bench/results/overload-proxies.{json,md} and overload-proxies-goals.md: bulwark beside HAProxy and nginx across
// the scenarios that run them (upstream, cpu-bound, capacity-change), one table for the README's proof section and
// the goals for the benchmarks page. Each scenario run with the proxies replaces its own entry; the others stay as
// their last run left them (each entry names its machine and load average).
import * as fs from 'fs'
import * as path from 'path'
import * as os from 'os'
import { machine } from '../../harness.mjs'
import { fmt, goalsTable, resultsDir, table } from './report.mjs'
import { proxyGoalsTable } from './proxy-report.mjs'

/** "maxconn / limit_conn 10, queue 22 ms, limit_req 396 r/s" for the summary. */
const limitsText = (t) =>
  `${t.limit} in flight (HAProxy maxconn, nginx limit_conn; ${t.criticalLimit} with critical), HAProxy queue ${t.queueMs} ms, nginx limit_req ${t.rate} r/s burst ${t.burst}`

/** What the summary keeps of a row. */
const pickRow = (r) => ({
  id: r.id,
  contender: r.contender,
  load: r.load,
  goodput: r.goodput,
  p50: r.p50,
  p99: r.p99,
  criticalSuccess: r.criticalSuccess,
})

const JSON_FILE = path.join(resultsDir, 'overload-proxies.json')

// The summary's rows, in order, with names that hold for every scenario (each scenario's own table gives its limits).
const ROWS = [
  ['bulwark', 'bulwark (defaults) in the gateway, no proxy'],
  ['bulwark-haproxy', 'bulwark (defaults) behind HAProxy (defaults)'],
  ['haproxy-tuned', 'HAProxy tuned: maxconn, queue, critical first'],
  ['nginx-limit-conn', 'nginx tuned: limit_conn'],
  ['nginx-limit-req', 'nginx tuned: limit_req'],
  ['haproxy', 'HAProxy (defaults)'],
  ['nginx', 'nginx (defaults)'],
]

/** "97 · 48 · 99.5": goodput % of capacity, admitted p99 ms, critical ok %. */
function stepCell(entry, id, load) {
  const r = entry?.rows.find((x) => x.id === id && x.load === load)
  if (r === undefined) return ''
  return `${fmt((100 * r.goodput) / r.capacity)} · ${fmt(r.p99, 0, 'timeout')} · ${fmt(100 * r.criticalSuccess, 1)}`
}

/** Per change: goodput after it, % of the new capacity, and how soon the contender met its targets. */
function changeCell(entry, id) {
  const cells = (entry?.results ?? []).map((c) => c.rows.find((x) => x.id === id)).filter(Boolean)
  const within = (s) => (Number.isFinite(s) ? `${fmt(s, 1)} s` : 'never')
  return cells.map((r) => `${fmt((100 * r.afterGoodput) / r.newCapacity)} % (${within(r.follow)})`).join(' / ')
}

function hopCell(entry, id) {
  const h = entry?.hops?.find((x) => x.id === id)
  if (h === undefined) return ''
  const signed = (n, digits) => (n >= 0 ? `+${fmt(n, digits)}` : fmt(n, digits))
  return `${signed(h.addedP50, 1)} ms, ${signed(h.addedUs, 0)} us`
}

function render(all) {
  const io = all.upstream
  const cpu = all['cpu-bound']
  const change = all['capacity-change']
  const lines = [
    '### Overload: bulwark beside HAProxy and nginx in front of the gateway',
    '',
    "Each cell of the four load columns: goodput in % of the capacity · admitted p99 in ms · critical requests within the SLO in %. The capacity: the upstream's, measured in each run (I/O-bound); the cluster's, measured once before the runs (CPU-bound: over 100 % where the machine was less busy than then). Capacity halves: goodput after the change in % of the new capacity (slots halved / service time doubled), and in brackets the seconds until it met 90 % of that within a p99 of 150 ms. Cost at 0.5x (I/O-bound): the p50 added against the gateway alone, and the CPU added per request (the proxy's processes and the gateway's; the p99 too in the scenario's table).",
    '',
    ...table(
      [
        'contender',
        'I/O-bound 4x',
        'I/O-bound 10x',
        'CPU-bound 4x',
        'CPU-bound 10x',
        'capacity halves at 3x',
        'cost at 0.5x',
      ],
      ROWS.map(([id, name]) => [
        name,
        stepCell(io, id, 4),
        stepCell(io, id, 10),
        stepCell(cpu, id, 4),
        stepCell(cpu, id, 10),
        changeCell(change, id),
        hopCell(io, id),
      ]),
    ),
    '',
  ]
  const any = io ?? cpu ?? change
  if (any !== undefined)
    lines.push(
      `Machine: ${any.machine} (the generator, the gateway and the proxy share its cores). Proxies: ${any.versions}.`,
      '',
    )
  for (const [name, entry] of [
    ['I/O-bound', io],
    ['CPU-bound', cpu],
    ['Capacity change', change],
  ]) {
    if (entry === undefined) continue
    const { start, end } = entry.loadAverage
    lines.push(
      `${name}: load average ${fmt(start, 1)} when it began and ${fmt(end, 1)} when it ended; tuned limits ${entry.limits}.`,
      '',
    )
  }
  return lines.join('\n')
}

function renderGoals(all) {
  const lines = ['### Overload: bulwark against the best tuned proxy, step by step', '']
  for (const [key, name] of [
    ['upstream', 'I/O-bound'],
    ['cpu-bound', 'CPU-bound'],
  ]) {
    if (all[key] === undefined) continue
    lines.push(...proxyGoalsTable(`${name}: goal`, all[key].goals), '')
  }
  if (all['capacity-change'] !== undefined)
    lines.push(...goalsTable('capacity change: goal', all['capacity-change'].goals), '')
  return lines.join('\n')
}

/**
 * A scenario's entry: the machine, the proxies' versions and limits, and what `fields` add (the steps' rows, each
 * with the capacity its goodput is a share of, the hop's cost and the goals; or a capacity change's results).
 */
export function summaryEntry(loadAtStart, versions, tuning, fields) {
  return {
    machine: machine(),
    loadAverage: { start: loadAtStart, end: os.loadavg()[0] },
    versions: `HAProxy ${versions.haproxy}, nginx ${versions.nginx}`,
    limits: limitsText(tuning),
    ...fields,
  }
}

/** The entry of a scenario run in steps: its rows (`capacityOf(r)`: the capacity of a row), hops and goals. */
export function stepsEntry(loadAtStart, versions, tuning, rows, capacityOf, proxies) {
  return summaryEntry(loadAtStart, versions, tuning, {
    rows: rows.map((r) => ({ ...pickRow(r), capacity: capacityOf(r) })),
    hops: proxies.hops,
    goals: proxies.goals,
  })
}

/** Replaces `scenario`'s entry ({ machine, versions, limits, rows | results, hops, goals }) and rewrites the files. */
export function updateProxySummary(scenario, entry) {
  fs.mkdirSync(resultsDir, { recursive: true })
  const all = fs.existsSync(JSON_FILE) ? JSON.parse(fs.readFileSync(JSON_FILE, 'utf8')) : {}
  all[scenario] = entry
  fs.writeFileSync(JSON_FILE, JSON.stringify(all, null, 2))
  fs.writeFileSync(path.join(resultsDir, 'overload-proxies.md'), render(all))
  fs.writeFileSync(path.join(resultsDir, 'overload-proxies-goals.md'), renderGoals(all))
  console.log('wrote bench/results/overload-proxies{.md,.json,-goals.md}')
}

// Shared benchmark harness: runs cases with mitata in one process, then prints (and saves) a table of ns/op with
// targets and ratios, headed by a description of the machine. Every bench/*.bench.mjs uses it.
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { fileURLToPath } from 'url'
import { bench, do_not_optimize, run } from 'mitata'

export { do_not_optimize }

const resultsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results')

/** One line describing where the numbers come from. */
export function machine() {
  const cpus = os.cpus()
  const model = cpus[0]?.model?.trim() ?? 'unknown CPU'
  return `${model}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`
}

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')

/** `name version` of an installed peer (a dev dependency), as tables name what they measured. */
export function peer(name) {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8'))
  return `${name} ${manifest.version}`
}

/**
 * cases: [{ name, fn, target?: ns, baseline?: true }]. The baseline case (if any) is what ratios compare to:
 * ratio = case ns / baseline ns. Returns rows of { name, ns, p99, target, ok, ratio }. `options.peers`: the peers
 * measured (names from `peer()`), listed under the machine line.
 */
export async function measure(title, cases, options = {}) {
  for (const c of cases) bench(c.name, c.fn)
  const result = await run({ format: 'quiet', throw: true })
  const byName = new Map(result.benchmarks.map((b) => [b.alias, b.runs[0].stats]))
  const baseline = cases.find((c) => c.baseline)
  const baseNs = baseline ? byName.get(baseline.name).avg : undefined
  const rows = cases.map((c) => {
    const s = byName.get(c.name)
    return {
      name: c.name,
      ns: s.avg,
      p50: s.p50,
      p99: s.p99,
      target: c.target,
      ok: c.target === undefined ? undefined : s.avg <= c.target,
      ratio: baseNs ? s.avg / baseNs : undefined,
    }
  })
  report(title, rows, baseline?.name, options)
  return rows
}

function fmt(ns) {
  return ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(1)} ns`
}

function report(title, rows, baselineName, options) {
  const header = ['case', 'avg', 'p50', 'p99', 'target', baselineName ? `x ${baselineName}` : '']
  const lines = rows.map((r) => [
    r.name,
    fmt(r.ns),
    fmt(r.p50),
    fmt(r.p99),
    r.target === undefined ? '' : `<= ${r.target} ns ${r.ok ? 'met' : 'MISSED'}`,
    r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`,
  ])
  writeTable(title, header.filter(Boolean), lines, options)
}

/**
 * Prints a markdown table headed by the machine line and saves it in bench/results/, for benchmarks that measure
 * something other than ns per call (throughput, latency under concurrency). `lines`: one array of cells per row;
 * `options.peers`: the peers measured, listed under the machine line; `options.note`: a line printed under those;
 * `options.save: false` prints without saving (a smoke run must not replace the published table).
 */
export function writeTable(title, header, lines, { peers, note, save = true } = {}) {
  const md = [
    `### ${title}`,
    '',
    `Machine: ${machine()}`,
    ...(peers?.length ? ['', `Peers: ${peers.join(', ')}`] : []),
    ...(note ? ['', note] : []),
    '',
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...lines.map((l) => `| ${l.slice(0, header.length).join(' | ')} |`),
    '',
  ].join('\n')
  console.log(md)
  if (!save) return
  fs.mkdirSync(resultsDir, { recursive: true })
  const file = path.join(
    resultsDir,
    `${title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')}.md`,
  )
  fs.writeFileSync(file, md)
}

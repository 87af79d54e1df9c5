// What every overload scenario writes: markdown tables (printed and saved), a goals table, JSON, and charts, all
// under bench/results/ so that `npm run readme` can embed them.
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { fileURLToPath } from 'url'
import { machine } from '../../harness.mjs'

export const resultsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'results')

/** A number for a table: `infinite` for Infinity and NaN (a request never answered). */
export function fmt(n, digits = 0, infinite = 'never') {
  return Number.isFinite(n) ? n.toFixed(digits) : infinite
}

export function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ]
}

/** goals: [[goal, met (boolean), measured]] */
export function goalsTable(title, goals) {
  return table(
    [title, 'met', 'measured'],
    goals.map(([goal, ok, measured]) => [goal, ok ? 'yes' : 'NO', measured]),
  )
}

/** Writes `<name>.md` (and prints it), `<name>.json` and any `<name><suffix>.svg` given. */
export function writeResults(name, lines, data, charts = {}) {
  fs.mkdirSync(resultsDir, { recursive: true })
  const md = [...lines, ''].join('\n')
  console.log(md)
  fs.writeFileSync(path.join(resultsDir, `${name}.md`), md)
  fs.writeFileSync(path.join(resultsDir, `${name}.json`), JSON.stringify({ machine: machine(), ...data }, null, 2))
  for (const [suffix, svg] of Object.entries(charts))
    fs.writeFileSync(path.join(resultsDir, `${name}${suffix}.svg`), svg)
  console.log(`wrote bench/results/${name}.{md,json${Object.keys(charts).length ? ',svg' : ''}}`)
}

/**
 * "Machine: ..., load average L when the scenario began and M when it ended": the numbers of a busy machine are
 * noisy (the load average counts runnable processes; over 2 on these 2 cores, others wait for a core).
 */
export function machineLine(loadAtStart, loadAtEnd = os.loadavg()[0]) {
  return `Machine: ${machine()}, load average ${loadAtStart.toFixed(1)} when the scenario began and ${loadAtEnd.toFixed(1)} when it ended (2 cores)`
}

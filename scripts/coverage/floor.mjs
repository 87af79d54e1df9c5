// The coverage floors (scripts/coverage/floor.json): the lowest coverage a run may measure, per language and
// measure, in percent. A run below any floor fails; `npm run coverage -- --raise` lifts each floor to what the run
// measured less a margin, and never lowers one: a floor only rises. The margin (half a point) is the noise between
// runs of the same code: paths taken on timing (a Redis timeout, a sampler tick landing mid-call) come and go.
import * as fs from 'fs'
import * as path from 'path'
import { fileURLToPath } from 'url'

export const floorFile = path.join(path.dirname(fileURLToPath(import.meta.url)), 'floor.json')

/** { typescript: { lines, statements, functions, branches }, native: { lines, functions } }, in percent. */
export function readFloor(file = floorFile) {
  return JSON.parse(fs.readFileSync(file, 'utf8'))
}

/** The measures of `measured` under their floor, as sentences; empty when every one is at or above it. */
export function shortfalls(measured, floor) {
  const out = []
  for (const [language, measures] of Object.entries(floor)) {
    for (const [measure, least] of Object.entries(measures)) {
      const got = measured[language]?.[measure]
      if (got === undefined) out.push(`${language} ${measure}: not measured (floor ${least} %)`)
      else if (got < least) out.push(`${language} ${measure}: ${got.toFixed(2)} % is under its floor of ${least} %`)
    }
  }
  return out
}

export const margin = 0.5

/** The floor raised to what was measured less the margin, in tenths; a floor above that stays as it is. */
export function raised(measured, floor) {
  const out = structuredClone(floor)
  for (const [language, measures] of Object.entries(measured)) {
    out[language] ??= {}
    for (const [measure, got] of Object.entries(measures)) {
      const rounded = Math.floor((got - margin) * 10) / 10
      out[language][measure] = Math.max(out[language][measure] ?? 0, rounded)
    }
  }
  return out
}

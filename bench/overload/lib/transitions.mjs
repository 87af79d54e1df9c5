// How fast a contender reacts when the load steps up, and how fast it lets everything through again when the load
// falls back to 0.5x, from a run's requests in bins of 250 ms.
import { createRequire } from 'module'

const require = createRequire(import.meta.url)
const { timeline } = require('../../lib/open-loop.cjs')

const BIN_MS = 250

/**
 * Seconds from `fromMs` (the step up to `load` times the capacity) to the first bin in which at least half of the
 * excess is shed; Infinity if none before `toMs`, NaN for a load that has no excess.
 */
export function sheddingOnset(run, fromMs, toMs, load) {
  if (load <= 1) return NaN
  const bins = timeline(run, fromMs, toMs, BIN_MS)
  const i = bins.findIndex((b) => b.shedRate >= 0.5 * (1 - 1 / load))
  return i < 0 ? Infinity : (i * BIN_MS) / 1000
}

/**
 * Seconds from `fromMs` (the step back to 0.5x) to the first bin from which, until `toMs`, nothing is shed and the
 * p99 is within the SLO; Infinity if that never holds.
 */
export function recoveryTime(run, fromMs, toMs, sloMs) {
  const bins = timeline(run, fromMs, toMs, BIN_MS, sloMs)
  const i = bins.findIndex((_, k) => bins.slice(k).every((b) => b.shedRate === 0 && b.p99 <= sloMs))
  return i < 0 ? Infinity : (i * BIN_MS) / 1000
}

// Time sources. All are monotonic milliseconds on the host's CLOCK_MONOTONIC timeline, so values taken in
// different processes can be compared (shared rolling windows rely on it).
import { native } from '../native/load-native'
import { cell, loopCell, signalCells } from './signal-cells'

/** A clock: monotonic milliseconds, fractions allowed. */
export type Clock = () => number

// process.hrtime() reads the monotonic clock performance.now() reads, without what reading the global `performance`
// costs the first time: Node loads perf_hooks then (1.5-2.5 ms and about 0.3 MB in a fresh process, Node 20 and 24).
// Once the caller is optimized, V8 removes the array hrtime returns (no allocation per read; performance.now()
// allocates its result), and a read costs what performance.now() does. One offset maps it onto the host timeline.
let preciseOffset: number | undefined

function hrtimeMs(): number {
  const t = process.hrtime()
  return t[0] * 1e3 + t[1] / 1e6
}

/** Precise monotonic time (about 150 ns per read here: a call into the runtime). */
export function preciseNow(): number {
  return hrtimeMs() + (preciseOffset ??= native.monotonicNow() - hrtimeMs())
}

const coarseIndex = loopCell >= 0 ? loopCell + cell.loopNow : cell.processNow

/**
 * Coarse monotonic time (one memory load): advanced each time this thread's event loop enters or leaves poll and
 * at every sampler tick (50 ms by default). Within one synchronous stretch of JavaScript it does not move, so it
 * suits bucket boundaries and cooldowns, not latency measurement; see preciseNow.
 */
export function coarseNow(): number {
  return signalCells[coarseIndex]
}

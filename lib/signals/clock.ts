// Time sources. All are monotonic milliseconds on the host's CLOCK_MONOTONIC timeline, so values taken in
// different processes can be compared (shared rolling windows rely on it).
import { native } from '../native/load-native'
import { cell, loopCell, signalCells } from './signal-cells'

/** A clock: monotonic milliseconds, fractions allowed. */
export type Clock = () => number

// performance.now() counts from this process's start on the same monotonic clock; one offset maps it onto the
// host timeline. Node loads perf_hooks (about 1 ms) when the global `performance` is first read: at the first
// precise read, not when bulwark loads.
let preciseOffset: number | undefined

/** Precise monotonic time (about 50 ns per read here: a call into the runtime). */
export function preciseNow(): number {
  return performance.now() + (preciseOffset ??= native.monotonicNow() - performance.now())
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

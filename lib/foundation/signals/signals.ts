import { cell, loopCell, signalCells } from './signal-cells'

/** CPU usage of this process's container (cgroup), in permille of the CPU it may use, smoothed (EMA). */
export function cpuUsage(): number {
  return signalCells[cell.cpuEma]
}

/** Utilization of this thread's event loop in permille (share of time not waiting in poll), smoothed. */
export function eventLoopUtilization(): number {
  return loopCell >= 0 ? signalCells[loopCell + cell.loopElu] : 0
}

/**
 * Queueing delay of this thread's event loop in ms, smoothed: how long the loop goes without returning to poll,
 * which is how long a request that has arrived waits before its callback can run.
 */
export function eventLoopDelay(): number {
  return loopCell >= 0 ? signalCells[loopCell + cell.loopDelay] : 0
}

/**
 * The shortest busy stretch of this thread's event loop in the last tick, in ms: a queue is standing only when
 * even the loop's best moment keeps requests waiting (the signal CoDel uses).
 */
export function eventLoopDelayMin(): number {
  return loopCell >= 0 ? signalCells[loopCell + cell.loopDelayMin] : 0
}

/** The last tick's unsmoothed queueing delay of this thread's event loop (its longest busy stretch), in ms. */
export function eventLoopDelayRaw(): number {
  return loopCell >= 0 ? signalCells[loopCell + cell.loopDelayRaw] : 0
}

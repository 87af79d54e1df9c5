import { CELL, PHASE } from './latency-layout'

/** What the adaptive concurrency check has learned (host-wide when its owner is shared). */
export interface LatencyStats {
  /** The limit on requests in flight learned from latency (0 until the first measurement). */
  limit: number
  /** Whether the limit is enforced now: the response time stayed inflated over the base. */
  shedding: boolean
  /** Whether the base response time is being measured again (requests held under it briefly). */
  probing: boolean
  /** The learned base response time, ms (0 until learned). */
  baseRt: number
  /** The latest measured mean response time, ms. */
  sampleRt: number
  /** Measurements of the base made while shedding. */
  probes: number
}

/** Reads the controller's cells starting at f64 index `at` (its owner's stats() and watchers share this). */
export function latencyStats(f64: Float64Array, at: number): LatencyStats {
  const phase = f64[at + CELL.phase]
  return {
    limit: f64[at + CELL.limit],
    shedding: phase !== PHASE.idle,
    probing: phase === PHASE.probing,
    baseRt: f64[at + CELL.base],
    sampleRt: f64[at + CELL.sample],
    probes: f64[at + CELL.probes],
  }
}

import type { RegionLayout } from '../../foundation/regions/region-layout'

/**
 * The latency controller's shared cells, as f64 indices from the start of its block. Every member reads `cap` on
 * each request; the rest is written once per step (a quarter of a bucket) by the one member that claims the step
 * (see `epoch`).
 */
export const CELL = {
  /** The limit requests are held to now; 0 while the check does not shed. */
  cap: 0,
  /** The limit the gradient computes (also while the check does not shed). */
  limit: 1,
  /** The learned base response time, ms; 0 until learned. */
  base: 2,
  /** The response time a request admitted now can expect, ms: requests in flight over the completion rate. */
  sample: 3,
  /** The measured response time once the limit settled (a moving average; Infinity: none yet). */
  anchor: 4,
  /** 1 while the expected response time is over the tolerated one and the check does not shed yet, else 0. */
  watching: 5,
  /** IDLE, SHEDDING or PROBING. */
  phase: 6,
  /** When the next measurement of the base is due. */
  nextProbe: 7,
  /** The current gap between measurements of the base, ms. */
  probeGap: 8,
  /** A measurement of the base only reads buckets that start after this time. */
  probeFrom: 9,
  /** The limit before the measurement (restored after it). */
  probeLimit: 10,
  /** A measurement that has not gathered samples by this time is abandoned. */
  probeDeadline: 11,
  /** A jump of the sample over the anchor triggers a measurement only after this time. */
  armedAt: 12,
  /** Consecutive steps without inflation while shedding. */
  calm: 13,
  /** Base measurements made (for stats). */
  probes: 14,
  /** When the expected response time rose over the tolerated one (while watching). */
  inflatedSince: 15,
  /** The completion rate once the limit settled, per ms (a moving average; 0: none yet). */
  anchorRate: 16,
  /** The latest mean response time of completed requests, ms. */
  measured: 17,
  /** When the last step was claimed. */
  lastStepAt: 18,
  /** Requests in flight when the inflation began. */
  inflatedFrom: 19,
  /** The share of the base's capacity the current probe holds requests to. */
  probeShare: 20,
  /** The completion rate before the probe, per ms. */
  probeRate: 21,
  /** The most response times a candidate for the base has been the mean of (shedding waits for enough). */
  baseSamples: 22,
  /** 1 when the current probe was started because the upstream changed, else 0. */
  probeForChange: 23,
  /** The bucket whose steps the next three cells sum up (the gradient is applied once per bucket). */
  gradientEpoch: 24,
  expectedSum: 25,
  expectedCount: 26,
  /** The most requests in flight a step saw since the gradient was last applied. */
  peakInFlight: 27,
  count: 28,
} as const

export const PHASE = { idle: 0, shedding: 1, probing: 2 } as const

export interface LatencyPlacement {
  /** Payload offset of the f64 cells (CELL). */
  cells: number
  /** Payload offset of the Int32 cell naming the last step whose update was claimed. */
  epoch: number
}

/** Adds the controller's cells to a component's layout. */
export function describeLatency(layout: RegionLayout): LatencyPlacement {
  const epoch = layout.cell(0, true)
  const cells = layout.block(CELL.count * 8)
  return { cells, epoch }
}

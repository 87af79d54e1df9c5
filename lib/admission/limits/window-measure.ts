import type { BucketTotals, RollingWindow } from '../../foundation/regions/rolling-window'

/** A measurement wants this many response times; it reads older buckets until it has them. */
const WANTED_SAMPLES = 8
/** Response times a candidate for the base is the mean of (when the buckets read hold that many). */
const BASE_SAMPLES = 64
/** Fewer response times than this are no measurement. */
const USABLE_SAMPLES = 3
/** How far back a measurement reads, in buckets. */
const MAX_BACK = 20

/**
 * What the completed buckets of a pair of rolling windows (completions, sampled response times) say, for the
 * latency controller (docs/rules/latency.md). Reads back from the newest completed bucket: the first
 * WANTED_SAMPLES response times give `rt` (their mean) and `rate` (completions per ms over their buckets); reading
 * on up to BASE_SAMPLES gives `longRt` and `longSamples`, the candidate for the base (a minimum of small means
 * would learn a base biased low by their noise). When nothing completed for long while requests are in flight,
 * that time goes to `stalledMs`: an upstream that hangs is the worst inflation of all.
 */
export class WindowMeasure {
  rt = 0
  rate = 0
  longRt = 0
  longSamples = 0
  stalledMs = 0
  /** How far back a measurement reads, in buckets. */
  declare readonly maxBack: number
  declare private readonly passes: RollingWindow
  declare private readonly rts: RollingWindow
  declare private readonly bucketMs: number
  private readonly scratch: BucketTotals = { count: 0, sum: 0 }

  constructor(passes: RollingWindow, rts: RollingWindow) {
    this.passes = passes
    this.rts = rts
    this.bucketMs = passes.bucketMs
    this.maxBack = Math.min(passes.size - 1, MAX_BACK)
  }

  /**
   * Measures the buckets before `epoch` (none before `first`). `stallAfter`: how long without a completion, ms,
   * counts as a hang when requests are in flight (Infinity: never); `lastRt` stands in for `rt` during a hang.
   * False when there is nothing to measure.
   */
  take(epoch: number, first: number, inFlight: number, stallAfter: number, lastRt: number): boolean {
    let count = 0
    let sum = 0
    let passes = 0
    let buckets = 0
    let silent = 0
    let longCount = 0
    let longSum = 0
    const oldest = Math.max(first, epoch - this.maxBack)
    for (let e = epoch - 1; e >= oldest && longCount < BASE_SAMPLES; e--) {
      const p = this.passes.readEpoch(e, this.scratch).sum
      const r = this.rts.readEpoch(e, this.scratch)
      longCount += r.count
      longSum += r.sum
      if (count >= WANTED_SAMPLES) continue
      if (p === 0 && silent === buckets) silent++
      count += r.count
      sum += r.sum
      passes += p
      buckets++
    }
    this.longSamples = longCount
    this.longRt = longCount >= USABLE_SAMPLES ? longSum / longCount : 0
    const stalled = silent * this.bucketMs
    const hung = inFlight > 0 && silent >= 2 && stalled > stallAfter
    this.stalledMs = hung ? stalled : 0
    if (count < USABLE_SAMPLES) {
      if (!hung) return false
      this.rt = lastRt
      this.rate = 0
      return true
    }
    this.rt = sum / count
    this.rate = passes / (buckets * this.bucketMs)
    return true
  }
}

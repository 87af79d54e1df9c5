import type { BucketTotals, RollingWindow } from '../../foundation/regions/rolling-window'

/**
 * Little's law capacity from the rolling windows (docs/rules/bbr.md): maxPass is the busiest completed bucket,
 * minRt the smallest mean response time of a completed bucket, and maxInFlight = maxPass * minRt * buckets per
 * second / 1000. Recomputed at most once per bucket (the windows only change meaningfully when a bucket
 * completes), so the hot path reads three cached numbers.
 */
export class CapacityEstimator {
  maxPass = 1
  minRt = 1
  maxInFlight = 0
  private cachedEpoch = -1
  // The times the cached epoch covers: inside them, limit() is two comparisons.
  private cachedFrom = Infinity
  private cachedUntil = -Infinity
  declare private readonly passes: RollingWindow
  declare private readonly rts: RollingWindow
  declare private readonly bucketsPerSecond: number
  declare private minInFlight: number
  private readonly scratch: BucketTotals = { count: 0, sum: 0 }

  constructor(passes: RollingWindow, rts: RollingWindow, bucketMs: number, minInFlight: number) {
    this.passes = passes
    this.rts = rts
    this.bucketsPerSecond = 1000 / bucketMs
    this.minInFlight = minInFlight
  }

  /** Takes a new floor (a live rule changed it), in force from the next call. */
  setFloor(minInFlight: number): void {
    this.minInFlight = minInFlight
    this.invalidate()
  }

  /** maxInFlight at `now` (never below minInFlight). */
  limit(now: number): number {
    if (now < this.cachedUntil && now >= this.cachedFrom) return this.maxInFlight
    const epoch = this.passes.epochAt(now)
    if (epoch !== this.cachedEpoch) this.recompute(epoch)
    const cacheable = this.passes.cacheable(epoch, now)
    this.cachedFrom = cacheable ? this.passes.epochStart(epoch) : Infinity
    this.cachedUntil = cacheable ? this.passes.epochStart(epoch) + this.passes.bucketMs : -Infinity
    return this.maxInFlight
  }

  /** Forgets the cached estimate: whatever changes it between bucket boundaries (a new floor) calls this. */
  private invalidate(): void {
    this.cachedEpoch = -1
    this.cachedFrom = Infinity
    this.cachedUntil = -Infinity
  }

  /** The estimate without the floor (what the reference computes). */
  rawLimit(now: number): number {
    this.limit(now)
    return Math.floor((this.maxPass * this.minRt * this.bucketsPerSecond) / 1000 + 1e-9)
  }

  private recompute(epoch: number): void {
    this.cachedEpoch = epoch
    const size = this.passes.size
    let maxPass = 1
    let minRt = Infinity
    // The completed live buckets, oldest first; the in-progress one (epoch) is excluded.
    for (let e = epoch - size + 1; e < epoch; e++) {
      const passes = this.passes.readEpoch(e, this.scratch).sum
      if (passes > maxPass) maxPass = passes
      const rt = this.rts.readEpoch(e, this.scratch)
      if (rt.count > 0 && rt.sum / rt.count < minRt) minRt = rt.sum / rt.count
    }
    this.maxPass = maxPass
    this.minRt = minRt === Infinity ? 1 : minRt
    // The epsilon keeps float noise (54.99999...) from costing a whole request of capacity.
    const raw = Math.floor((this.maxPass * this.minRt * this.bucketsPerSecond) / 1000 + 1e-9)
    this.maxInFlight = raw > this.minInFlight ? raw : this.minInFlight
  }
}

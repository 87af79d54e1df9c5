import type { WindowPlacement } from '../../foundation/regions/region-layout'
import { type BucketTotals, RollingWindow } from '../../foundation/regions/rolling-window'
import type { SharedRegion } from '../../foundation/regions/shared-region'

/** In a shared region, other members' records reach this member's totals within this many ms of its clock... */
export const SHARED_REFRESH_MS = 1
/** ...or within this many of its own calls, whichever comes first (a clock that stands still still refreshes). */
export const SHARED_REFRESH_CALLS = 1024
// A local window has one writer (us), so only bucket boundaries need a refresh; this just keeps the counter finite.
const LOCAL_REFRESH_CALLS = 0x3fffffff

/**
 * Count and sum of a rolling window, kept up to date incrementally so that a decision costs a few loads instead of
 * a merge of every bucket of every lane. The whole window is merged at each bucket boundary (buckets expire there)
 * and, when shared, every SHARED_REFRESH_MS of the clock or SHARED_REFRESH_CALLS calls (other members' records);
 * this member's own records are added as they are made, so its next decision sees them at once.
 */
export class WindowTally {
  /** Adds over the live buckets at or after the floor. */
  count = 0
  /** Sum of the values added over the same buckets. */
  sum = 0
  declare readonly window: RollingWindow
  declare private readonly shared: boolean
  declare private readonly start: number
  private readonly scratch: BucketTotals = { count: 0, sum: 0 }
  private floorEpoch = 0
  private refreshAt = Number.NEGATIVE_INFINITY
  private callsLeft = 0

  constructor(region: SharedRegion, placement: WindowPlacement) {
    this.window = new RollingWindow(region, placement)
    this.shared = region.shared
    this.start = region.f64[(region.base + placement.startOffset) / 8]
  }

  /** Brings count and sum up to `now` (cheap unless a refresh is due). Call before reading them. */
  sync(now: number): void {
    if (now >= this.refreshAt || --this.callsLeft < 0) this.refresh(now)
  }

  /** Adds `value` (>= 0) at `now`; count and sum include it immediately. */
  record(value: number, now: number): void {
    if (now >= this.refreshAt || --this.callsLeft < 0) this.refresh(now)
    this.window.record(value, now)
    this.count += 1
    this.sum += value
  }

  /** Forgets every bucket before `epoch` (a breaker that closes starts counting afresh), then refreshes. */
  restartFrom(epoch: number, now: number): void {
    this.floorEpoch = epoch
    this.refresh(now)
  }

  /** Merges the live buckets of every lane. */
  refresh(now: number): void {
    const current = this.window.epochAt(now)
    let first = current - this.window.size + 1
    if (first < this.floorEpoch) first = this.floorEpoch
    let count = 0
    let sum = 0
    for (let e = first; e <= current; e++) {
      this.window.readEpoch(e, this.scratch)
      count += this.scratch.count
      sum += this.scratch.sum
    }
    this.count = count
    this.sum = sum
    const boundary = this.start + (current + 1) * this.window.bucketMs
    if (this.shared) {
      this.refreshAt = Math.min(boundary, now + SHARED_REFRESH_MS)
      this.callsLeft = SHARED_REFRESH_CALLS
    } else {
      this.refreshAt = boundary
      this.callsLeft = LOCAL_REFRESH_CALLS
    }
  }
}

import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { native } from '../native/load-native'
import { checkInteger, checkPlacementObject, checkSpan } from './placement-checks'
import type { WindowPlacement } from './region-layout'
import { checkRegion, type SharedRegion } from './shared-region'

const { bucketSize: BUCKET_BYTES, tag: TAG, count: COUNT, sum: SUM } = native.layout.window
const TAG_MODULUS = 0x7fffffff
/**
 * Epochs are clamped here (9000 years of 1 ms buckets): past 2^53 a float epoch no longer moves by one, and a loop
 * over epochs would never end when a clock returns a huge number or Infinity.
 */
export const MAX_EPOCH = 2 ** 48

/** One bucket's totals. */
export interface BucketTotals {
  count: number
  sum: number
}

/**
 * A rolling window of `size` buckets (docs/rules/rolling-window.md) in a region: every member writes its own lane,
 * readers merge lanes. Adds are plain stores to this member's lane (no contention, nothing lost); a rotation clears a
 * bucket behind a tag so that a concurrent reader never mistakes old sums for the current epoch.
 *
 * Buckets are anchored at the window's start time. A bucket is live when its epoch is one of the last `size`
 * epochs at the time of the read; reading never changes the window.
 */
export class RollingWindow {
  declare readonly size: number
  declare readonly bucketMs: number
  declare private readonly region: SharedRegion
  declare private readonly f64: Float64Array
  declare private readonly i32: Int32Array
  declare private readonly start: number
  declare private readonly bucketsBase: number
  declare private readonly laneStride: number
  declare private readonly ownLane: number
  // The bucket of the last record (see record()): where it lives, its tag and the times it covers.
  private bucketFrom = Infinity
  private bucketUntil = -Infinity
  private tagIndex = 0
  private countIndex = 0
  private sumIndex = 0
  private tag = -1
  /** recordAt()'s `now` for enter(): a field, not an argument (see recordAt()). */
  private enteringAt = -Infinity
  /** record()'s `now`, handed to recordAt() in this array. */
  private readonly clock = new Float64Array(1)

  constructor(region: SharedRegion, placement: WindowPlacement) {
    checkRegion(region)
    const p = checkPlacementObject<WindowPlacement>(placement)
    const size = checkInteger('placement.size', p.size, 1, 1_000_000)
    if (typeof p.bucketMs !== 'number' || !(p.bucketMs > 0 && p.bucketMs < Infinity)) {
      throw new InvalidArgumentError('placement.bucketMs', p.bucketMs, 'a finite number > 0')
    }
    checkInteger('placement.laneStride', p.laneStride, size * BUCKET_BYTES, 2 ** 32)
    checkSpan('placement.startOffset', region, p.startOffset, 8, 8)
    checkSpan('placement.bucketsOffset', region, p.bucketsOffset, region.lanes * p.laneStride, 8)
    this.region = region
    this.f64 = region.f64
    this.i32 = region.i32
    this.size = placement.size
    this.bucketMs = placement.bucketMs
    this.start = region.f64[(region.base + placement.startOffset) / 8]
    this.bucketsBase = region.base + placement.bucketsOffset
    this.laneStride = placement.laneStride
    this.ownLane = this.bucketsBase + region.member * placement.laneStride
  }

  /** The epoch (bucket number since the start) that `now` falls in. */
  epochAt(now: number): number {
    const e = Math.floor((now - this.start) / this.bucketMs)
    return e > 0 ? (e < MAX_EPOCH ? e : MAX_EPOCH) : 0
  }

  /**
   * @internal
   * Whether `now` (in `epoch`) lies in [epochStart(epoch), epochStart(epoch) + bucketMs): a caller may then keep
   * what it computed for `epoch` until its clock leaves that span (a time within rounding of a boundary may land in
   * the neighbouring bucket, as it may with epochAt). False for an epoch epochAt clamped (a clock before the start
   * or absurdly far on): those are computed on every call.
   */
  cacheable(epoch: number, now: number): boolean {
    const from = this.epochStart(epoch)
    return now >= from && now < from + this.bucketMs
  }

  /** @internal When bucket `epoch` begins. */
  epochStart(epoch: number): number {
    return this.start + epoch * this.bucketMs
  }

  /** Adds `value` (>= 0) to the current bucket. Adding 0 raises the count but not the sum. */
  add(value: number, now: number): void {
    if (typeof value !== 'number' || !(value >= 0)) throw new InvalidArgumentError('value', value, 'a number >= 0')
    if (typeof now !== 'number') throw new InvalidArgumentError('now', now, 'a number (ms)')
    this.record(value, now)
  }

  /**
   * `add` without the argument check, for callers whose values are non-negative by construction. The hot path:
   * while `now` stays in the bucket of the last record (and its tag is still ours), two stores.
   */
  record(value: number, now: number): void {
    // Through recordAt, so that the path is written once (a small function: V8 inlines it into any caller).
    this.clock[0] = now
    this.recordAt(value, this.clock, 0)
  }

  /**
   * record() with `now` read from `times[index]`, for request paths that keep their clock reading in a typed array:
   * a double passed to a call V8 did not inline is boxed (16 bytes a call), a typed array and an index are not.
   */
  recordAt(value: number, times: Float64Array, index: number): void {
    const now = times[index]
    if (!(now < this.bucketUntil && now >= this.bucketFrom) || this.i32[this.tagIndex] !== this.tag) {
      // A field, not an argument (see above), and Node 20 may box an argument before the branch, on every record.
      this.enteringAt = now
      this.enter()
    }
    const f64 = this.f64
    f64[this.countIndex] += 1
    f64[this.sumIndex] += value
  }

  /** Moves the record cursor to the bucket `now` falls in, clearing it if it still holds an older epoch. */
  private enter(): void {
    const now = this.enteringAt
    const epoch = this.epochAt(now)
    const bucket = this.ownLane + (epoch % this.size) * BUCKET_BYTES
    // >>> (unsigned): a payload may pass 2 GiB, where >> would turn the index negative.
    const tagIndex = (bucket + TAG) >>> 2
    const countIndex = (bucket + COUNT) >>> 3
    const sumIndex = (bucket + SUM) >>> 3
    const tag = (epoch % TAG_MODULUS) + 1
    // Only this member writes its lane, so a plain read of the tag is current.
    if (this.i32[tagIndex] !== tag) {
      Atomics.store(this.i32, tagIndex, 0)
      this.f64[countIndex] = 0
      this.f64[sumIndex] = 0
      Atomics.store(this.i32, tagIndex, tag)
    }
    this.tagIndex = tagIndex
    this.countIndex = countIndex
    this.sumIndex = sumIndex
    this.tag = tag
    const cacheable = this.cacheable(epoch, now)
    this.bucketFrom = cacheable ? this.epochStart(epoch) : Infinity
    this.bucketUntil = cacheable ? this.epochStart(epoch) + this.bucketMs : -Infinity
  }

  /** Totals of one epoch over every lane, written into `out`. */
  readEpoch(epoch: number, out: BucketTotals): BucketTotals {
    let count = 0
    let sum = 0
    if (epoch >= 0) {
      const tag = (epoch % TAG_MODULUS) + 1
      const slot = (epoch % this.size) * BUCKET_BYTES
      const lanes = this.region.laneHighWater()
      for (let lane = 0; lane < lanes; lane++) {
        const bucket = this.bucketsBase + lane * this.laneStride + slot
        const tagIndex = (bucket + TAG) >>> 2
        if (Atomics.load(this.i32, tagIndex) !== tag) continue
        const c = this.f64[(bucket + COUNT) >>> 3]
        const s = this.f64[(bucket + SUM) >>> 3]
        // A rotation that raced the two reads changes the tag: that bucket is being cleared, count it empty.
        if (Atomics.load(this.i32, tagIndex) !== tag) continue
        count += c
        sum += s
      }
    }
    out.count = count
    out.sum = sum
    return out
  }

  /**
   * The `size` buckets of the window at `now`, oldest first, the current one last (empty buckets included).
   */
  buckets(now: number): BucketTotals[] {
    const current = this.epochAt(now)
    const out: BucketTotals[] = []
    for (let e = current - this.size + 1; e <= current; e++) out.push(this.readEpoch(e, { count: 0, sum: 0 }))
    return out
  }

  /** Totals over every live bucket, the current one included. */
  total(now: number, out: BucketTotals = { count: 0, sum: 0 }): BucketTotals {
    const current = this.epochAt(now)
    let count = 0
    let sum = 0
    for (let e = current - this.size + 1; e <= current; e++) {
      this.readEpoch(e, out)
      count += out.count
      sum += out.sum
    }
    out.count = count
    out.sum = sum
    return out
  }

  /**
   * Calls `fn` for each completed live bucket, oldest first, excluding the in-progress one: the buckets the
   * reference's BBR reads (at most size - 1 of them).
   */
  forEachCompleted(now: number, fn: (bucket: BucketTotals) => void): void {
    const current = this.epochAt(now)
    const scratch: BucketTotals = { count: 0, sum: 0 }
    for (let e = current - this.size + 1; e < current; e++) fn(this.readEpoch(e, scratch))
  }
}

/**
 * The latencies of the last `size` calls in a ring, and their quantiles: sorted again after every size / 16 new
 * samples (a copy and a sort of at most `size` numbers), so that reading a quantile costs one array load.
 */
export class LatencySamples {
  private readonly ring: Float64Array
  private readonly sorted: Float64Array
  private count = 0
  private next = 0
  private sinceSort = 0
  private readonly resortEvery: number

  constructor(
    private readonly size: number,
    private readonly minSamples: number,
  ) {
    this.ring = new Float64Array(size)
    this.sorted = new Float64Array(size)
    this.resortEvery = Math.max(1, Math.floor(size / 16))
  }

  add(ms: number): void {
    if (!(ms >= 0 && ms < Infinity)) return
    this.ring[this.next] = ms
    this.next = (this.next + 1) % this.size
    if (this.count < this.size) this.count++
    if (++this.sinceSort >= this.resortEvery || this.count === this.minSamples) this.sort()
  }

  /** The q-quantile (0 < q <= 1) of the samples as last sorted; Infinity before minSamples. */
  quantile(q: number): number {
    if (this.count < this.minSamples) return Infinity
    const n = this.sortedCount
    return this.sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]
  }

  private sortedCount = 0

  private sort(): void {
    this.sinceSort = 0
    const view = this.sorted.subarray(0, this.count)
    view.set(this.ring.subarray(0, this.count))
    view.sort()
    this.sortedCount = this.count
  }
}

import { type LanePlacement, RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'

/** The region kind of one key's gauge (`bulwark top` and `bulwark gc` list it under this name). */
export const KEY_GAUGE_KIND = 'key-concurrency'

/** One key's layout: one reclaimable lane per member (`bulwark top` reads a key's region with it too). */
export function placeKeyGauge(layout: RegionLayout): LanePlacement {
  return layout.describe('v1').lanes64(1, true)
}

/**
 * One key's requests in flight, as one Int32 per member (docs/rules/key-concurrency.md): each member adds to its own
 * lane only, and the lanes are reclaimable, so the region zeroes the lane of a member that detaches or whose
 * process dies (within a lease, about a second): a crashed worker's slots come back without anyone releasing them.
 *
 * `take(max)` adds first and counts after, both with sequentially consistent atomics: of two members racing for the
 * last slot, at least the second to add sees the first, so the key never has more than `max` in flight (under a race
 * both may refuse, never both admit). A local gauge (not shared) is a plain counter.
 */
export class KeyGauge {
  readonly shared: string | undefined
  private readonly region: SharedRegion
  private readonly i32: Int32Array
  private readonly first: number
  private readonly stride: number
  private readonly own: number

  constructor(shared: string | undefined, namespace: string | undefined, lanes: number) {
    const layout = new RegionLayout(KEY_GAUGE_KIND, shared === undefined ? 1 : lanes)
    const placement = placeKeyGauge(layout)
    this.region = SharedRegion.forComponent(shared, layout, namespace)
    this.shared = shared
    this.i32 = this.region.i32
    this.first = (this.region.base + placement.offset) >> 2
    this.stride = placement.stride >> 2
    this.own = this.first + this.region.member * this.stride
  }

  /** Takes a slot if the key has fewer than `max` in flight (host-wide when shared). */
  take(max: number): boolean {
    const i32 = this.i32
    const own = this.own
    if (!this.region.shared) {
      if (i32[own] >= max) return false
      i32[own]++
      return true
    }
    Atomics.add(i32, own, 1)
    if (this.total() <= max) return true
    Atomics.sub(i32, own, 1)
    return false
  }

  /** Gives back a slot this member took. */
  give(): void {
    if (this.region.shared) Atomics.sub(this.i32, this.own, 1)
    else this.i32[this.own]--
  }

  /** This member's requests in flight for the key. */
  get local(): number {
    return this.i32[this.own]
  }

  /** The key's requests in flight, host-wide when shared. */
  total(): number {
    if (!this.region.shared) return this.i32[this.own]
    const i32 = this.i32
    const lanes = this.region.laneHighWater()
    let sum = 0
    for (let lane = 0, i = this.first; lane < lanes; lane++, i += this.stride) sum += Atomics.load(i32, i)
    return sum
  }

  /** Detaches: what this member still holds is given back with its lane. */
  close(): void {
    this.region.close()
  }
}

import { native } from '../../foundation/native/load-native'
import type { NativeHeavyKeeperConfig } from '../../foundation/native/native-types'
import { type LanePlacement, RegionLayout } from '../../foundation/regions/region-layout'
import type { SharedRegion } from '../../foundation/regions/shared-region'

const sizes = native.heavyKeeperLayout

/** What members of a shared HeavyKeeper must agree on. */
export interface SketchShape {
  k: number
  width: number
  depth: number
  decay: number
}

/** Where a HeavyKeeper's parts live in its region's payload. */
export interface HeavyKeeperPlacement {
  layout: RegionLayout
  control: number
  alive: LanePlacement
  lanes: LanePlacement
  sketch: number
}

/** One member's lane: its total, and (when shared) its published top-k keys. */
export function laneBytes(k: number, shared: boolean): number {
  return sizes.laneHeaderSize + (shared ? k * sizes.slotSize : 0)
}

/**
 * The HeavyKeeper's region: the control line, the alive flags, the members' lanes and the sketch. `members` is the
 * member capacity when shared, undefined for a local sketch. Watchers (`bulwark top`) lay out a snapshot with it.
 */
export function describeHeavyKeeper(o: SketchShape, members: number | undefined): HeavyKeeperPlacement {
  const shared = members !== undefined
  const layout = new RegionLayout('heavykeeper', shared ? members : 1).describe(
    `k=${o.k} width=${o.width} depth=${o.depth} decay=${o.decay}`,
  )
  const control = layout.block(sizes.controlSize)
  const alive = layout.lanes64(1, true)
  const lanes = layout.lanes64(laneBytes(o.k, shared) / 8)
  const sketch = layout.block(o.width * o.depth * sizes.bucketSize)
  return { layout, control, alive, lanes, sketch }
}

/** The native sketch's configuration over `region` as member `member`. */
export function nativeKeeperConfig(
  o: SketchShape & { minCount: number; seed: number },
  p: HeavyKeeperPlacement,
  region: SharedRegion,
  member: number,
): NativeHeavyKeeperConfig {
  return {
    k: o.k,
    width: o.width,
    depth: o.depth,
    decay: o.decay,
    minCount: o.minCount,
    seed: o.seed,
    shared: region.shared,
    view: new Uint8Array(region.buffer, region.base, p.layout.payloadSize),
    controlOffset: p.control,
    sketchOffset: p.sketch,
    aliveOffset: p.alive.offset,
    aliveStride: p.alive.stride,
    lanesOffset: p.lanes.offset,
    laneStride: p.lanes.stride,
    member,
    laneCapacity: region.lanes,
  }
}

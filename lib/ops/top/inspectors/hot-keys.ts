import { describeHeavyKeeper, nativeKeeperConfig } from '../../../components/hotkeys/heavy-keeper-layout'
import { native } from '../../../foundation/native/load-native'
import type { RegionSnapshot } from '../region-snapshot'
import type { HotKey, HotKeysView } from '../views'

/**
 * A shared HeavyKeeper's region (HeavyKeeper or HotKeyCache): the host's top keys and the total counted. The
 * native sketch reads the members' published heaps over the snapshot, as a member would in list(), from a lane no
 * live member holds (what it writes there stays in the private view).
 */
export function inspectHotKeys(snapshot: RegionSnapshot, _now: number, keys: number): HotKeysView {
  const f = snapshot.fingerprint
  const shape = { k: f.number('k'), width: f.number('width'), depth: f.number('depth'), decay: f.number('decay') }
  const placement = describeHeavyKeeper(shape, f.number('lanes'))
  const region = snapshot.region(placement.layout)
  const lanes = region.laneHighWater()
  const reader = new native.HeavyKeeper(
    nativeKeeperConfig({ ...shape, minCount: 0, seed: 0 }, placement, region, readerLane(snapshot, lanes)),
  )
  const listed: HotKey[] = reader
    .list(lanes)
    .slice(0, keys)
    .map((item) => {
      const binary = typeof item.key !== 'string'
      const key: HotKey = {
        key: binary ? Buffer.from(item.key as Uint8Array).toString('hex') : (item.key as string),
        count: item.count,
      }
      if (binary) key.binary = true
      if (item.truncated) key.truncated = true
      return key
    })
  return { type: 'hot-keys', k: shape.k, total: reader.total(lanes), keys: listed }
}

/** A lane to read from: one never used if any is left, else one whose member is gone. */
function readerLane(snapshot: RegionSnapshot, highWater: number): number {
  if (highWater < snapshot.memberCapacity) return highWater
  const taken = new Set(snapshot.liveSlots())
  for (let lane = snapshot.memberCapacity - 1; lane >= 0; lane--) if (!taken.has(lane)) return lane
  return snapshot.memberCapacity - 1 // every lane is live: that member's own keys are left out of the list
}

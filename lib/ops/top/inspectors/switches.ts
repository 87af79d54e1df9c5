import { describeSwitches, readSlots } from '../../../components/switches/switch-layout'
import type { RegionSnapshot } from '../region-snapshot'
import type { SwitchesView } from '../views'

/** A switchboard's region: every active switch, oldest first. */
export function inspectSwitches(snapshot: RegionSnapshot): SwitchesView {
  const f = snapshot.fingerprint
  const placement = describeSwitches(f.number('slots'), f.number('lanes'))
  const region = snapshot.region(placement.layout)
  const switches = readSlots(region.u8, region.f64, region.base + placement.slotsOffset, placement.slots)
  return { type: 'switches', switches }
}

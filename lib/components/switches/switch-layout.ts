import { placeRules, type RulePlacement } from '../../foundation/live-rules/rule-block'
import { RegionLayout } from '../../foundation/regions/region-layout'

/**
 * A switchboard's region (docs/guide/degrade.md, "Manual switches"): a live-rules block (docs/rules/live-rules.md:
 * its writers' lock and its sequence, odd while a writer changes the board, so that readers never take a
 * half-written table), then `slots` slots of { mode, since (Date.now
 * ms), name length, name bytes }, written under the block's lock.
 */
export const NAME_BYTES = 120
export const SLOT_BYTES = 24 + NAME_BYTES

/** Mode codes in a slot (0: empty). */
/** What a switch forces: a breaker open or closed, a class or route shed, or served its fallback. */
export type SwitchMode = 'open' | 'closed' | 'shed' | 'fallback'
export const MODE: Readonly<Record<SwitchMode, number>> = { open: 1, closed: 2, shed: 3, fallback: 4 }
export const MODE_NAMES: readonly (SwitchMode | undefined)[] = [undefined, 'open', 'closed', 'shed', 'fallback']

export interface SwitchPlacement {
  layout: RegionLayout
  /** The live-rules block whose lock and sequence guard the slots. */
  rules: RulePlacement
  /** Payload offset of slot 0. */
  slotsOffset: number
  slots: number
}

export function describeSwitches(slots: number, lanes: number): SwitchPlacement {
  const layout = new RegionLayout('switches', lanes).describe(`slots=${slots} name=${NAME_BYTES}`)
  const rules = placeRules(layout, []) // no numbers: the block lends its lock and sequence to the slots
  const slotsOffset = layout.block(slots * SLOT_BYTES)
  return { layout, rules, slotsOffset, slots }
}

/** One switch as stored: its target, mode and when it was set (Date.now ms). */
export interface StoredSwitch {
  target: string
  mode: SwitchMode
  since: number
}

const decoder = new TextDecoder()

/** The switches in a board's slots, oldest first (a slot that is empty or holds nonsense is skipped). */
export function readSlots(u8: Uint8Array, f64: Float64Array, slotsBase: number, slots: number): StoredSwitch[] {
  const entries: StoredSwitch[] = []
  for (let s = 0; s < slots; s++) {
    const at = slotsBase + s * SLOT_BYTES
    const mode = MODE_NAMES[f64[at / 8]]
    const length = f64[at / 8 + 2]
    if (mode === undefined || !(length > 0 && length <= NAME_BYTES && Number.isInteger(length))) continue
    const target = decoder.decode(u8.subarray(at + 24, at + 24 + length))
    entries.push({ target, mode, since: f64[at / 8 + 1] })
  }
  return entries.sort((a, b) => a.since - b.since)
}

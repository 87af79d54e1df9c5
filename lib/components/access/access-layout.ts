// An access list's region (docs/rules/access-lists.md, "The region"): a live-rules block (its writers' lock and its
// sequence, odd while a writer changes the list: docs/rules/live-rules.md), then `maxEntries` slots of 64 bytes,
// written under the block's lock. A slot: mode (0: empty), kind, prefix, key length, then the range's first
// address (four 32-bit words from byte 8) or the key's UTF-8 bytes (from byte 8).
import { placeRules, type RulePlacement } from '../../foundation/live-rules/rule-block'
import { RegionLayout } from '../../foundation/regions/region-layout'
import { KIND_KEY, KIND_V4, KIND_V6, MAX_KEY_BYTES, type ParsedEntry } from './access-entry'
import type { RangeInput } from './address-ranges'

export const ACCESS_LIST_KIND = 'access-list'
export const SLOT_BYTES = 64
const DATA = 8

export interface AccessPlacement {
  layout: RegionLayout
  rules: RulePlacement
  /** Payload offset of slot 0. */
  slots: number
}

export function describeAccessList(maxEntries: number, lanes: number): AccessPlacement {
  const layout = new RegionLayout(ACCESS_LIST_KIND, lanes).describe(`v1 entries=${maxEntries}`)
  const rules = placeRules(layout, []) // no numbers: the block lends its lock and sequence to the slots
  const slots = layout.block(maxEntries * SLOT_BYTES)
  return { layout, rules, slots }
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Writes `entry` with mode code `mode` into the slot at byte `at` (a whole slot: no stale byte survives). */
export function writeSlot(u8: Uint8Array, u32: Uint32Array, at: number, entry: ParsedEntry, mode: number): void {
  u8.fill(0, at, at + SLOT_BYTES)
  u8[at + 1] = entry.kind
  u8[at + 2] = entry.prefix
  if (entry.kind === KIND_KEY) {
    const bytes = encoder.encode(entry.key)
    u8[at + 3] = bytes.length
    u8.set(bytes, at + DATA)
  } else {
    for (let i = 0; i < entry.words.length; i++) u32[(at + DATA) / 4 + i] = entry.words[i]
  }
  u8[at] = mode // last: a reader that sees the mode sees the rest (the seqlock orders it too)
}

/** What a list's slots hold, split by kind, for compiling (a slot holding nonsense is skipped). */
export interface SlotContents {
  v4: RangeInput
  v6: RangeInput
  keys: Map<string, number>
  /** Slots that hold an entry. */
  used: number
}

function ranges(width: number, capacity: number): RangeInput {
  return {
    width,
    starts: new Uint32Array(capacity * width),
    prefixes: new Uint8Array(capacity),
    modes: new Uint8Array(capacity),
    count: 0,
  }
}

/** Reads every slot (under the caller's seqlock check). */
export function readSlots(u8: Uint8Array, u32: Uint32Array, first: number, slots: number): SlotContents {
  let count4 = 0
  let count6 = 0
  for (let s = 0, at = first; s < slots; s++, at += SLOT_BYTES) {
    if (u8[at] === 0) continue
    if (u8[at + 1] === KIND_V4) count4++
    else if (u8[at + 1] === KIND_V6) count6++
  }
  const out: SlotContents = { v4: ranges(1, count4), v6: ranges(4, count6), keys: new Map(), used: 0 }
  for (let s = 0, at = first; s < slots; s++, at += SLOT_BYTES) {
    const mode = u8[at]
    if (mode !== 1 && mode !== 2) continue
    const kind = u8[at + 1]
    const prefix = u8[at + 2]
    if (kind === KIND_KEY) {
      const length = u8[at + 3]
      if (length === 0 || length > MAX_KEY_BYTES) continue
      out.keys.set(decoder.decode(u8.subarray(at + DATA, at + DATA + length)), mode)
    } else {
      const r = kind === KIND_V4 ? out.v4 : kind === KIND_V6 ? out.v6 : undefined
      if (r === undefined || prefix > 32 * r.width || r.count === r.modes.length) continue
      const n = r.count++
      for (let i = 0; i < r.width; i++) r.starts[n * r.width + i] = u32[(at + DATA) / 4 + i]
      r.prefixes[n] = prefix
      r.modes[n] = mode
    }
    out.used++
  }
  return out
}

/** The slot's entry as parseEntry would give it back (for list() and finding an entry's slot). */
export function slotEntry(
  u8: Uint8Array,
  u32: Uint32Array,
  at: number,
): { kind: number; prefix: number; data: string } {
  const kind = u8[at + 1]
  if (kind === KIND_KEY)
    return { kind, prefix: 0, data: decoder.decode(u8.subarray(at + DATA, at + DATA + u8[at + 3])) }
  const words = kind === KIND_V4 ? 1 : 4
  const data = Array.from(u32.subarray((at + DATA) / 4, (at + DATA) / 4 + words)).join(',')
  return { kind, prefix: u8[at + 2], data }
}

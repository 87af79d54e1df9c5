import { native } from '../native/load-native'
import type { LanePlacement, RegionLayout } from '../regions/region-layout'

/** The slot format and bounds, from native/core/keyed/keyed_layout.h (docs/rules/keyed-table.md). */
export const KEYED = native.layout.keyed

/** Per-member counters of a table (f64 cells of its own lane, plain adds; totals sum the lanes). */
export const COUNTER = {
  created: 0,
  reused: 1,
  overflowAdmitted: 2,
  overflowRefused: 3,
  longKeys: 4,
  contended: 5,
  brokenClaims: 6,
  refused: 7,
} as const
const COUNTERS = 8

/** Buckets of eight slots for `maxKeys` keys: twice as many slots as keys (docs/rules/keyed-table.md, "Sizing"). */
export function bucketsFor(maxKeys: number): number {
  const buckets = Math.ceil((maxKeys * KEYED.slotsPerKey) / KEYED.bucketSlots)
  return Math.min(KEYED.maxBuckets, Math.max(1, buckets))
}

/** Bytes of slots a table of `maxKeys` keys takes. */
export function slotBytes(maxKeys: number): number {
  return bucketsFor(maxKeys) * KEYED.bucketSlots * KEYED.slotSize
}

/**
 * Ticks per ms for a limit of `rate` per second and bursts of `burst` (docs/rules/keyed-table.md, "Time"): the
 * burst's span is maxTau / ruleHeadroom ticks, so that a live rule may widen it that many times, and a tick is at
 * least 1 / maxTicksPerMs ms.
 */
export function ticksPerMsFor(rate: number, burst: number): number {
  const byBurst = Math.floor(KEYED.maxTau / (Math.ceil(burst) * KEYED.ruleHeadroom))
  const byClock = Math.floor((KEYED.maxTicksPerMs * 1000) / rate)
  return (Math.max(1, Math.min(byBurst, byClock)) * rate) / 1000
}

/** What a table's members agree on and where it lives in the region's payload. */
export interface KeyedTablePlacement {
  buckets: number
  /** Payload offsets of f64 cells: the seed's two words, the time origin (ms), ticks per ms of slots and overflow. */
  seed: number
  origin: number
  ticks: number
  overflowTicks: number
  /** Payload offset of the overflow limit's state and epoch words (two i32, on a line of their own). */
  overflow: number
  counters: LanePlacement
  /** Payload offset of the heaviest keys' list, and of the slots. */
  heavy: number
  slots: number
}

/** The settings a new table starts from (written once, by the member that creates the region). */
export interface KeyedTableStart {
  maxKeys: number
  seed: readonly [number, number]
  origin: number
  ticksPerMs: number
  overflowTicksPerMs: number
}

/** Lays a keyed table out in `layout` (its fingerprint must already name what sizes it: maxKeys). */
export function placeKeyedTable(layout: RegionLayout, start: KeyedTableStart): KeyedTablePlacement {
  // Members that claim slots another way must not share the region (one part, however many tables it holds).
  const protocol = `keyed=v${KEYED.protocolVersion}`
  if (!layout.fingerprint.split(' ').includes(protocol)) layout.describe(protocol)
  const seed = layout.cell(start.seed[0])
  layout.cell(start.seed[1])
  const origin = layout.cell(start.origin)
  const ticks = layout.cell(start.ticksPerMs)
  const overflowTicks = layout.cell(start.overflowTicksPerMs)
  const overflow = layout.cell(0, true)
  const counters = layout.lanes64(COUNTERS)
  const heavy = layout.block(KEYED.heavyEntries * KEYED.heavyEntrySize)
  const buckets = bucketsFor(start.maxKeys)
  const slots = layout.block(buckets * KEYED.bucketSlots * KEYED.slotSize)
  return { buckets, seed, origin, ticks, overflowTicks, overflow, counters, heavy, slots }
}

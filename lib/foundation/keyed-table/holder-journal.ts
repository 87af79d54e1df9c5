import type { LanePlacement, RegionLayout } from '../regions/region-layout'
import type { SharedRegion } from '../regions/shared-region'
import { native } from '../native/load-native'

const header = native.layout.region
/** Words before a lane's entries: the owner's pid (0: none), the lane's generation. */
const HEAD = 4
/** Entry generations: 6 bits under the slot number. */
const GEN_BITS = 6
const GEN_MASK = (1 << GEN_BITS) - 1

/** Requests one member holds at once through one count table (docs/rules/keyed-table.md, "Count slots"). */
export const JOURNAL_ENTRIES = 8192

/** A journal's lanes in `layout` (one per member, never reclaimed by the region: the table does it). */
export function placeJournal(layout: RegionLayout): LanePlacement {
  return layout.lanes64((HEAD + JOURNAL_ENTRIES) / 2)
}

/**
 * What each member of a shared count table holds (docs/rules/keyed-table.md, "A dead holder's count"): one lane per
 * member, stamped with its owner's pid and a generation, then one entry per request it holds: the slot's number,
 * tagged with the generation. A member that leaves gives back what it holds; when the region frees the member slot
 * of a member that died (within a lease of its death), any member gives back what that lane still holds; a member
 * that takes a lane over gives back what its previous owner left first. Each entry is cleared by one
 * compare-and-swap, so that two members reclaiming at once give each count back once, and entries of another
 * generation (a new owner's) are never taken.
 */
export class HolderJournal {
  declare private readonly region: SharedRegion
  declare private readonly i32: Int32Array
  /** i32 index of lane 0, and the stride between lanes in words. */
  declare private readonly first: number
  declare private readonly stride: number
  /** i32 index of this member's first entry, and the generation its entries carry. */
  declare private readonly own: number
  declare private readonly gen: number

  constructor(region: SharedRegion, placement: LanePlacement, giveBack: (slot: number) => void) {
    this.region = region
    this.i32 = region.i32
    this.first = (region.base + placement.offset) >> 2
    this.stride = placement.stride >> 2
    const lane = this.first + region.member * this.stride
    this.gen = (Atomics.load(this.i32, lane + 1) + 1) & GEN_MASK
    Atomics.store(this.i32, lane + 1, this.gen)
    Atomics.store(this.i32, lane, this.memberPid(region.member))
    this.own = lane + HEAD
    // What this lane's previous owners left (the region gave their member slot to this member) goes back first.
    this.reclaimLane(region.member, this.gen, true, giveBack)
  }

  /** Notes that this member's request `entry` (< JOURNAL_ENTRIES) holds a count of slot `slot`. */
  hold(entry: number, slot: number): void {
    Atomics.store(this.i32, this.own + entry, ((slot + 1) << GEN_BITS) | this.gen)
  }

  /** Notes that request `entry` holds nothing now. */
  drop(entry: number): void {
    Atomics.store(this.i32, this.own + entry, 0)
  }

  /**
   * Gives back what every lane whose member slot the region freed still holds; returns the counts given back.
   * Bounded: lanes x entries.
   */
  reclaim(giveBack: (slot: number) => void): number {
    let given = 0
    const lanes = this.region.laneHighWater()
    for (let lane = 0; lane < lanes; lane++) {
      const at = this.first + lane * this.stride
      const pid = Atomics.load(this.i32, at)
      if (pid === 0 || this.memberPid(lane) !== 0) continue
      const gen = Atomics.load(this.i32, at + 1)
      // Taken over since (a new member stamps its lane after it has the member slot): its owner reclaims.
      if (this.memberPid(lane) !== 0) continue
      given += this.reclaimLane(lane, gen, false, giveBack)
      Atomics.compareExchange(this.i32, at, pid, 0)
    }
    return given
  }

  /** Gives back this member's own holdings (on close). */
  release(giveBack: (slot: number) => void): void {
    this.reclaimLane(this.region.member, this.gen, false, giveBack)
    Atomics.store(this.i32, this.own - HEAD, 0)
  }

  /** Clears the lane's entries of generation `gen` (of every other generation with `others`), giving each back. */
  private reclaimLane(lane: number, gen: number, others: boolean, giveBack: (slot: number) => void): number {
    let given = 0
    const entries = this.first + lane * this.stride + HEAD
    for (let e = 0; e < JOURNAL_ENTRIES; e++) {
      const value = this.i32[entries + e]
      if (value === 0 || ((value & GEN_MASK) === gen) === others) continue
      if (Atomics.compareExchange(this.i32, entries + e, value, 0) !== value) continue
      giveBack((value >>> GEN_BITS) - 1)
      given++
    }
    return given
  }

  /** The pid the region's member table has in member slot `lane` (0 when free). */
  private memberPid(lane: number): number {
    return Atomics.load(this.i32, (header.headerSize + lane * header.memberSlotSize + header.memberPid) >> 2)
  }
}

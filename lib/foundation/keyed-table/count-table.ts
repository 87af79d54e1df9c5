import type { SharedRegion } from '../regions/shared-region'
import type { HolderJournal } from './holder-journal'
import { claimMark, type FingerprintFunction, KeyedTable } from './keyed-table'
import { COUNTER, KEYED, type KeyedTablePlacement } from './keyed-table-layout'

const MASK = (1 << KEYED.countBits) - 1
/** One version step: every change of a count slot moves its version on (docs/rules/keyed-table.md, "Count slots"). */
const VERSION = 1 << KEYED.countBits
const SLOTS = KEYED.bucketSlots
/** What take() answers when the key may not have another request in flight. */
export const REFUSED = -1
/** take()'s internal answer: the slot changed hands under the update; look the key up again. */
const RELOCATE = -2
/**
 * Count slots: requests in flight per key, host-wide when shared (docs/rules/keyed-table.md, "Count slots"). A slot's
 * state word is the count (low bits) under a version that every change moves on, so that a reuse racing an update
 * is seen by its compare-and-swap. A key with nothing in flight is at rest: its slot may go to another key, which
 * then counts exactly as a fresh one. Keys that find no slot share the overflow count, `overflowMax` in all. The slot
 * numbers take() answers (the overflow's is `capacity`) are what a member's journal notes, so that the counts of a
 * member that dies come back.
 */
export class CountTable extends KeyedTable {
  /** i32 index of the overflow count's word. */
  declare private readonly overflow: number
  declare private journal: HolderJournal | undefined
  /** Requests in flight that keys without a slot share. */
  overflowMax = 1

  constructor(region: SharedRegion, p: KeyedTablePlacement, maxKeyLength: number, hash?: FingerprintFunction) {
    super(region, p, maxKeyLength, hash)
    this.overflow = (region.base + p.overflow) >> 2
  }

  /** Notes every count this member takes in `journal` (a shared table's), under the caller's request number. */
  useJournal(journal: HolderJournal): void {
    this.journal = journal
  }

  /**
   * One more request in flight for `key` if it has fewer than `max`: the slot number now holding it (the overflow's
   * is `capacity`), noted as request `entry` in the journal, or REFUSED. Never throws or allocates.
   */
  take(key: string, max: number, entry: number, nowMs: number): number {
    if (key.length > this.maxKeyLength) {
      this.count(COUNTER.longKeys)
      return this.takeOverflow(entry)
    }
    this.locate(key)
    for (let round = 0; round < KEYED.rescans; round++) {
      const i = this.find()
      if (i >= 0) {
        const taken = this.increment(i + 2, (i - this.slots) >> 2, max, entry, true)
        if (taken === REFUSED) this.refuse(key)
        if (taken !== RELOCATE) return taken
        continue
      }
      if (this.claimed >= 0) {
        if (!this.settleClaim(this.claimed, this.msOf(nowMs))) break
        continue
      }
      const j = this.pickTarget()
      // Looked up again after the pick, as RateTable does: no second slot for a key two members claim at once.
      if (this.shared && (this.find() >= 0 || this.claimed >= 0)) continue
      if (j < 0) return this.takeOverflow(entry)
      const taken = this.claimFor(j, entry, nowMs)
      if (taken !== RELOCATE) return taken
    }
    this.count(COUNTER.contended)
    return REFUSED
  }

  /** Gives back a count of slot number `slot` (from take(); never below 0, so a count given back twice heals). */
  give(slot: number): void {
    const i = slot === this.capacity ? this.overflow : this.slots + slot * 4 + 2
    const s = this.i32
    for (let tries = 0; tries < KEYED.casTries; tries++) {
      const x = Atomics.load(s, i)
      if ((x & MASK) === 0) return
      if (!this.shared) {
        s[i] = (x + VERSION - 1) | 0
        return
      }
      if (Atomics.compareExchange(s, i, x, (x + VERSION - 1) | 0) === x) return
    }
  }

  /** Requests in flight for `key` (host-wide when shared); 0 for a key without a slot. */
  inFlight(key: string): number {
    if (typeof key !== 'string' || key.length > this.maxKeyLength) return 0
    this.locate(key)
    const i = this.find()
    return i < 0 ? 0 : Atomics.load(this.i32, i + 2) & MASK
  }

  /** Requests in flight on the overflow count. */
  get overflowInFlight(): number {
    return Atomics.load(this.i32, this.overflow) & MASK
  }

  /**
   * Adds one below `max` to the count word `i` of slot number `slot`: the slot number, REFUSED, or RELOCATE when the
   * slot (an `owned` one, a key's) changed hands.
   */
  private increment(i: number, slot: number, max: number, entry: number, owned: boolean): number {
    const s = this.i32
    this.journal?.hold(entry, slot) // first: a member killed after the count moved never leaves it taken
    for (let tries = 0; tries < KEYED.casTries; tries++) {
      const x = Atomics.load(s, i)
      if (owned && (Atomics.load(s, i - 2) !== this.tag || Atomics.load(s, i - 1) !== this.check)) {
        this.journal?.drop(entry)
        return RELOCATE
      }
      if ((x & MASK) >= max) break
      if (!this.shared) {
        s[i] = (x + VERSION + 1) | 0
        return slot
      }
      if (Atomics.compareExchange(s, i, x, (x + VERSION + 1) | 0) === x) return slot
    }
    this.journal?.drop(entry)
    return REFUSED
  }

  private takeOverflow(entry: number): number {
    const taken = this.increment(this.overflow, this.capacity, this.overflowMax, entry, false)
    this.count(taken === REFUSED ? COUNTER.overflowRefused : COUNTER.overflowAdmitted)
    return taken
  }

  /** Claims slot `j` for the located key with its first request (docs/rules/keyed-table.md, "Claiming a slot"). */
  private claimFor(j: number, entry: number, nowMs: number): number {
    const s = this.i32
    const owner = s[j]
    if (!this.shared) {
      this.count(owner === 0 ? COUNTER.created : COUNTER.reused)
      s[j] = this.tag
      s[j + 1] = this.check
      s[j + 2] = ((s[j + 2] & ~MASK) + VERSION + 1) | 0
      return (j - this.slots) >> 2
    }
    const claim = claimMark(this.msOf(nowMs))
    if (owner < 0 || Atomics.compareExchange(s, j, owner, claim) !== owner) return RELOCATE
    const x = Atomics.load(s, j + 2)
    const slot = (j - this.slots) >> 2
    this.journal?.hold(entry, slot)
    // Still at rest (nothing in flight), and nobody's straggler moved the count since it was read; else the slot
    // goes back to its owner (unless the claim was broken meanwhile: then it is someone else's).
    if (
      (owner > 0 && (x & MASK) !== 0) ||
      Atomics.compareExchange(s, j + 2, x, ((x & ~MASK) + VERSION + 1) | 0) !== x
    ) {
      this.journal?.drop(entry)
      Atomics.compareExchange(s, j, claim, owner)
      return RELOCATE
    }
    // Broken meanwhile (this member stalled past claimBreakMs): the slot is not the key's, and the count taken there
    // is rewritten by the slot's next claim. Look again; the request counts where the key is.
    if (Atomics.load(s, j) !== claim) return this.claimBroken(entry)
    Atomics.store(s, j + 1, this.check)
    if (Atomics.compareExchange(s, j, claim, this.tag) !== claim) return this.claimBroken(entry)
    this.count(owner === 0 ? COUNTER.created : COUNTER.reused)
    return slot
  }

  private claimBroken(entry: number): number {
    this.journal?.drop(entry)
    return RELOCATE
  }

  /** The first empty slot of the home bucket, else its first with nothing in flight; then the alternate bucket. */
  private pickTarget(): number {
    const j = this.pickIn(this.home)
    return j >= 0 || this.alt === this.home ? j : this.pickIn(this.alt)
  }

  private pickIn(bucket: number): number {
    const s = this.i32
    let atRest = -1
    for (let n = 0, i = bucket; n < SLOTS; n++, i += 4) {
      const tag = s[i]
      if (tag === 0) return i
      if (tag > 0 && atRest < 0 && (s[i + 2] & MASK) === 0) atRest = i
    }
    return atRest
  }
}

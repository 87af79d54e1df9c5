import type { SharedRegion } from '../shared/shared-region'

/**
 * The front's header (native/core/hotkeys/heavy_keeper_front.h): u32 words [dirty count, seen generation, last
 * slot, last fingerprint, last estimate, unused], then f64s: the pending total (index 3) and the heap's threshold
 * (index 4: its minimum count when full, else -1). add() writes these indexes as literals.
 */
const LAST_SLOT = 2
const LAST_FINGERPRINT = 3
const LAST_ESTIMATE = 4
const HEADER_BYTES = 40
const MAX_COUNT = 0xffffffff
/** Longer keys go to native code every time: the front holds the keys it serves, and holds them small. */
const MAX_KEY_LENGTH = 104
/** Per key in a table: the slot's epoch when learned (top-k keys), the fingerprint, then one bucket per row. */
const TABLE_BUCKETS = 2
/** The front serves sketches of at most this many rows (the default and the hot-key cache have 4). */
export const FRONT_MAX_DEPTH = 4
const STRIDE = TABLE_BUCKETS + FRONT_MAX_DEPTH
/** Keys outside the top-k the front keeps, per key of k and at most (the oldest goes first). */
const OUTSIDE_PER_SLOT = 8
const OUTSIDE_MAX = 16_384
/** A key outside the top-k is kept once its estimate reaches this share of the heap's minimum. */
const LEARN_SHARE = 1 / 16

/** String.prototype.isWellFormed (Node 20 and later), not yet in the TypeScript library this package targets. */
type WellFormed = string & { isWellFormed(): boolean }

/** Bytes of a front for k keys and depth rows (HeavyKeeperFront::Size). */
export function frontBytes(k: number, depth: number): number {
  return HEADER_BYTES + Math.ceil((depth * 4) / 8) * 8 + k * 12
}

/** Where the front finds the sketch in a local HeavyKeeper's region. */
export interface FrontPlacement {
  k: number
  width: number
  depth: number
  sketch: number
}

/**
 * Adds `incr` to the four buckets of the key at `t[at]` when every one holds its fingerprint with a count above 0
 * and the largest count plus `incr` is at most `limit`: native code's rule for a key that owns its buckets, with
 * no random draw. Returns that largest count, or -1 having written nothing. A sketch of fewer rows repeats its
 * last bucket, harmless since every count is read before any is written; four rows written out cost a third less
 * than a loop here.
 */
function bump(s: Uint32Array, t: Uint32Array, at: number, incr: number, limit: number): number {
  const f = t[at + 1]
  const b0 = t[at + 2]
  const b1 = t[at + 3]
  const b2 = t[at + 4]
  const b3 = t[at + 5]
  if (((s[b0 + 1] ^ f) | (s[b1 + 1] ^ f) | (s[b2 + 1] ^ f) | (s[b3 + 1] ^ f)) !== 0) return -1
  const c0 = s[b0]
  const c1 = s[b1]
  const c2 = s[b2]
  const c3 = s[b3]
  const max = Math.max(c0, c1, c2, c3) + incr
  if (c0 === 0 || c1 === 0 || c2 === 0 || c3 === 0 || max > limit) return -1
  s[b0] = c0 + incr
  s[b1] = c1 + incr
  s[b2] = c2 + incr
  s[b3] = c3 + incr
  return max
}

/**
 * The JavaScript front of a local HeavyKeeper (docs/rules/heavykeeper.md, "The JavaScript front"): `add` of a
 * string key native code has seen, done here without crossing into native code when the key owns its buckets. For
 * a key in the top-k it records the heap count to raise; for a key outside it whose estimate stays at or below the
 * heap's minimum, nothing else changes; both record the total to add. Native code applies what is recorded before
 * anything else it does, so every result is the one native code alone would give. It holds at most k keys of the
 * top-k (one per heap slot) and 8k keys outside it (at most 16 384), of at most 104 UTF-16 units each; it serves
 * sketches of at most FRONT_MAX_DEPTH rows.
 */
export class HeavyKeeperFront {
  /** The memory native code shares with this front. */
  readonly memory: Uint8Array
  private readonly words: Uint32Array
  private readonly f64: Float64Array
  private readonly sketch: Uint32Array
  private readonly k: number
  private readonly depth: number
  private readonly epochs: number
  private readonly dirtyList: number
  private readonly pending: number
  private readonly lastBuckets: number
  /**
   * The keys the front holds -> their entries: keys of the top-k (entries below k: heap slots) and keys outside it
   * (entries from k on), in two maps so that the top-k's stays small and quick. Entry e's key is keys[e] (an entry
   * is replaced, never shared); its epoch (heap slots), fingerprint and buckets are in `table` at e * STRIDE.
   */
  private readonly top = new Map<string, number>()
  private readonly outside = new Map<string, number>()
  /** Entries from k on that hold a key. */
  private outsideHeld = 0
  private readonly keys: (string | undefined)[]
  private readonly table: Uint32Array
  /** The next entry outside the top-k to replace (the oldest). */
  private nextOutside = 0

  constructor(region: SharedRegion, p: FrontPlacement) {
    this.memory = new Uint8Array(frontBytes(p.k, p.depth))
    this.words = new Uint32Array(this.memory.buffer)
    this.f64 = new Float64Array(this.memory.buffer, 0, 5)
    this.sketch = new Uint32Array(region.buffer, region.base + p.sketch, p.width * p.depth * 2)
    this.k = p.k
    this.depth = p.depth
    this.lastBuckets = HEADER_BYTES / 4
    this.epochs = this.lastBuckets + Math.ceil((p.depth * 4) / 8) * 2
    this.dirtyList = this.epochs + p.k
    this.pending = this.dirtyList + p.k
    const entries = p.k + Math.min(p.k * OUTSIDE_PER_SLOT, OUTSIDE_MAX)
    this.keys = new Array<string | undefined>(entries).fill(undefined)
    this.table = new Uint32Array(entries * STRIDE)
  }

  /** Adds `incr` of `key` if the front can: 1 (the key is in the top-k), 0 (it is not), -1 (native code must). */
  add(key: string, incr: number): number {
    const e = this.top.get(key) ?? this.outside.get(key)
    if (e === undefined || incr >>> 0 !== incr) return -1
    const w = this.words
    const top = e < this.k
    if (top && this.table[e * STRIDE] !== w[this.epochs + e]) return -1 // the slot's key changed
    // Outside the top-k, an estimate at or below the heap's minimum (f64[4]; -1 when not full) stays outside.
    // Literals here keep add under V8's inlining limit (460 bytes of bytecode). A fading needs no check: only
    // native code fades a local sketch, and it applies what is pending first.
    const max = bump(this.sketch, this.table, e * STRIDE, incr, top ? MAX_COUNT : this.f64[4])
    if (max < 0) return -1
    this.f64[3] += incr // the pending total
    if (!top) return 0
    // A pending count is at least 1 once set: 0 means the slot is not yet in the dirty list.
    const p = this.pending + e
    const raised = w[p]
    if (max > raised) {
      if (raised === 0) w[this.dirtyList + w[0]++] = e // w[0]: the dirty count
      w[p] = max
    }
    return 1
  }

  /** Native code just added `key`: remember where, if the front can serve it next time. */
  learn(key: string): void {
    // Only well-formed keys: two strings with lone surrogates can be one key in UTF-8 (both become U+FFFD).
    if (key.length > MAX_KEY_LENGTH || !(key as WellFormed).isWellFormed()) return
    const w = this.words
    const slot = w[LAST_SLOT]
    if (slot < this.k) {
      const epoch = w[this.epochs + slot]
      if (this.keys[slot] === key && this.table[slot * STRIDE] === epoch) return
      this.hold(key, slot)
      this.table[slot * STRIDE] = epoch
      return
    }
    const threshold = this.f64[4]
    if (threshold < 0 || w[LAST_ESTIMATE] < threshold * LEARN_SHARE) return
    const stale = this.top.get(key) // a key that left the top-k
    if (stale !== undefined) this.release(stale)
    const e = this.outside.get(key)
    if (e !== undefined) {
      this.copyLast(e)
      return
    }
    this.hold(key, this.k + this.nextOutside)
    this.nextOutside = (this.nextOutside + 1) % (this.keys.length - this.k)
  }

  /**
   * Keys outside the top-k are forgotten: a key entered the heap without this front seeing it (as bytes, or
   * through addMany), so one of them may now be in the top-k.
   */
  forgetOutside(): void {
    if (this.outsideHeld === 0) return
    this.outside.clear()
    this.keys.fill(undefined, this.k)
    this.outsideHeld = 0
  }

  /** Forgets every key (after close). */
  clear(): void {
    this.forgetOutside()
    this.top.clear()
    this.keys.fill(undefined)
  }

  /** Entry e now holds `key`, with the fingerprint and buckets native code just reported. */
  private hold(key: string, e: number): void {
    this.release(e)
    if (e >= this.k) {
      this.outsideHeld++
      this.outside.set(key, e)
    } else {
      const elsewhere = this.outside.get(key) // a key that entered the top-k
      if (elsewhere !== undefined) this.release(elsewhere)
      this.top.set(key, e)
    }
    this.keys[e] = key
    this.copyLast(e)
  }

  private release(e: number): void {
    const old = this.keys[e]
    if (old === undefined) return
    const map = e >= this.k ? this.outside : this.top
    if (map.get(old) === e) map.delete(old)
    if (e >= this.k) this.outsideHeld--
    this.keys[e] = undefined
  }

  private copyLast(e: number): void {
    const w = this.words
    const at = e * STRIDE
    this.table[at + 1] = w[LAST_FINGERPRINT]
    for (let row = 0; row < FRONT_MAX_DEPTH; row++) {
      const reported = this.lastBuckets + Math.min(row, this.depth - 1)
      this.table[at + TABLE_BUCKETS + row] = w[reported] * 2
    }
  }
}

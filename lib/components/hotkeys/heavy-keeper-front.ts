import type { SharedRegion } from '../../foundation/regions/shared-region'
import { FRONT_LAYOUT, FRONT_MAX_DEPTH } from './heavy-keeper-front-layout'
import { drawUniform } from './heavy-keeper-random'

// The front's memory as native code lays it out (heavy-keeper-front-layout.ts), in constants of this module.
const LAST_SLOT = FRONT_LAYOUT.lastSlotWord
const LAST_FINGERPRINT = FRONT_LAYOUT.lastFingerprintWord
const LAST_ESTIMATE = FRONT_LAYOUT.lastEstimateWord
const ENTRIES_OFFSET = FRONT_LAYOUT.entriesOffsetWord
const DECAY_OFFSET = FRONT_LAYOUT.decayOffset
const DECAY_TABLE = FRONT_LAYOUT.decayTableSize
const HEADER_BYTES = FRONT_LAYOUT.headerSize
const ENTRY_ALIGN = FRONT_LAYOUT.entryAlign
/** An entry's words, and where its learned epoch, fingerprint and buckets are. */
const STRIDE = FRONT_LAYOUT.entryWords
const LEARNED = FRONT_LAYOUT.entryLearned
const FINGERPRINT = FRONT_LAYOUT.entryFingerprint
const BUCKETS = FRONT_LAYOUT.entryBuckets
const MAX_COUNT = 0xffffffff
/** Longer keys go to native code every time: the front holds the keys it serves, and holds them small. */
const MAX_KEY_LENGTH = 104
/** Keys outside the top-k the front keeps, per key of k and at most (the oldest goes first). */
const OUTSIDE_PER_SLOT = 16
const OUTSIDE_MAX = 16_384
/** A key outside the top-k is kept once its estimate reaches this share of the heap's minimum. */
const LEARN_SHARE = 1 / 16
/** Native code's coin flips one unit at a time go up to this increment (heavy_keeper_decay.cc); larger ones, there. */
const COIN_FLIP_INCR = 16
/**
 * A deferred increment stays at or below this: added to counts below 2^31 (what a key must have to defer), it
 * cannot pass 2^32 - 1, where native code saturates.
 */
const DEFER_MAX = 2 ** 31
/**
 * Keys begin to defer once this many adds since native code last ran took the slow path. Every crossing into native
 * code ends every deferral (flush): over cold keys, where one add in two to six crosses, a deferral that ends a few
 * adds later saves nothing and costs its bookkeeping (5-10 % of an add over a million keys); over warm keys, a
 * crossing comes every few thousand adds.
 */
const DEFER_AFTER = 16

/** String.prototype.isWellFormed (Node 20 and later), not yet in the TypeScript library this package targets. */
type WellFormed = string & { isWellFormed(): boolean }

const words8 = (n: number) => Math.ceil((n * 4) / 8) * 8

/** Bytes of a front for k keys and depth rows: HeavyKeeperFront::Size, then the entries of keys outside the top-k. */
export function frontBytes(k: number, depth: number): number {
  return HEADER_BYTES + words8(depth) + words8(k) + ENTRY_ALIGN - 8 + (k + outsideEntries(k)) * STRIDE * 4
}

function outsideEntries(k: number): number {
  return Math.min(k * OUTSIDE_PER_SLOT, OUTSIDE_MAX)
}

/** Where the front finds the sketch in a local HeavyKeeper's region. */
export interface FrontPlacement {
  k: number
  width: number
  depth: number
  sketch: number
}

/**
 * The largest count of the four buckets of the key at `t[at]` when every one holds its fingerprint with a count in
 * [1, 2^31 - 1] (the key owns them, and native code's rule adds to each with no random draw), else -1. A sketch of
 * fewer rows repeats its last bucket. No branch depends on which row holds the largest count (Math.max branched on
 * it, and the row is random: a misprediction per add).
 */
function ownedMax(s: Uint32Array, t: Uint32Array, at: number): number {
  const f = t[at + 2]
  const b0 = t[at + 3]
  const b1 = t[at + 4]
  const b2 = t[at + 5]
  const b3 = t[at + 6]
  if (((s[b0 + 1] ^ f) | (s[b1 + 1] ^ f) | (s[b2 + 1] ^ f) | (s[b3 + 1] ^ f)) !== 0) return -1
  // As int32s, a count of 0 or of 2^31 and more is negative once 1 is taken: one test for both.
  const c0 = s[b0] | 0
  const c1 = s[b1] | 0
  const c2 = s[b2] | 0
  const c3 = s[b3] | 0
  if (((c0 - 1) | (c1 - 1) | (c2 - 1) | (c3 - 1)) < 0) return -1
  // The largest of four counts without a branch: m - d when d = m - c is negative, that is c.
  let m = c0
  let d = m - c1
  m -= d & (d >> 31)
  d = m - c2
  m -= d & (d >> 31)
  d = m - c3
  m -= d & (d >> 31)
  return m
}

/** Adds `incr` to the four buckets ownedMax approved (a repeated bucket is raised once: each write is c + incr). */
function raiseOwned(s: Uint32Array, t: Uint32Array, at: number, incr: number): void {
  const b0 = t[at + 3]
  const b1 = t[at + 4]
  const b2 = t[at + 5]
  const b3 = t[at + 6]
  const c0 = s[b0]
  const c1 = s[b1]
  const c2 = s[b2]
  const c3 = s[b3]
  s[b0] = c0 + incr
  s[b1] = c1 + incr
  s[b2] = c2 + incr
  s[b3] = c3 + incr
}

/**
 * The JavaScript front of a local HeavyKeeper (docs/rules/heavykeeper.md, "The JavaScript front"): `add` of a
 * string key native code has seen, done here without crossing into native code. The key's buckets are updated by
 * native code's rule, coin flips included (drawn from native code's random sequence, whose state lives in the
 * front's memory). For a key in the top-k it records the heap count to raise; for a key outside it whose estimate
 * stays at or below the heap's minimum, nothing else changes; both record the total to add, which native code
 * applies before anything else it does. A warm key that owns its buckets defers adding to them, and the deferred
 * increments reach the buckets before the front touches another key's and before native code runs (flush), so
 * every result is the one native code alone would give. It holds at most k keys of the top-k (one per heap slot)
 * and 16k keys outside it (at most 16 384), of at most 104 UTF-16 units each; it serves sketches of at most
 * FRONT_MAX_DEPTH rows.
 */
export class HeavyKeeperFront {
  private readonly words: Uint32Array
  private readonly f64: Float64Array
  private readonly decay: Float64Array
  private readonly sketch: Uint32Array
  private readonly k: number
  private readonly depth: number
  private readonly dirtyList: number
  private readonly lastBuckets: number
  /**
   * Per entry, the increment its buckets still lack (0: the key is not deferring). Added to them before the front
   * reads or decays them for another key (the owner of a bucket is found by fingerprint) and, all of them, before
   * native code runs (flush).
   */
  private readonly deferred: Uint32Array
  /** The entries that began deferring since the last flush, each once (listed[e]). */
  private readonly deferring: Uint32Array
  private readonly listed: Uint8Array
  private deferringCount = 0
  /** Adds that took the slow path since the last flush. */
  private slowSinceFlush = 0
  /**
   * The keys the front holds -> their entries, in one map (one look-up per add): entries below k are heap slots,
   * entries from k on keys outside the top-k. Entry e's key is keys[e] (an entry is replaced, never shared); the
   * rest is in `table` at e * STRIDE. An entry serves while the epoch it learned is current: the slot's epoch
   * (native code's) for a heap slot, `outsideEpoch` for the others (moved on to forget them all).
   */
  private readonly held = new Map<string, number>()
  private readonly keys: (string | undefined)[]
  /**
   * Fingerprint -> the entry that holds it. Two keys with one fingerprint can own one bucket: only one of them is
   * held, so that a deferring key's buckets are never another held key's.
   */
  private readonly byFingerprint = new Map<number, number>()
  private readonly table: Uint32Array
  /** The next entry outside the top-k to replace (the oldest). */
  private nextOutside = 0
  private outsideEpoch = 0

  /** `memory`: frontBytes(k, depth) bytes that native code laid out (its constructor took them). */
  constructor(region: SharedRegion, p: FrontPlacement, memory: Uint8Array) {
    this.words = new Uint32Array(memory.buffer)
    this.f64 = new Float64Array(memory.buffer, 0, 5)
    this.decay = new Float64Array(memory.buffer, DECAY_OFFSET, DECAY_TABLE)
    this.sketch = new Uint32Array(region.buffer, region.base + p.sketch, p.width * p.depth * 2)
    this.k = p.k
    this.depth = p.depth
    this.lastBuckets = HEADER_BYTES / 4
    this.dirtyList = this.lastBuckets + words8(p.depth) / 4
    const entries = p.k + outsideEntries(p.k)
    this.deferred = new Uint32Array(entries)
    this.deferring = new Uint32Array(entries)
    this.listed = new Uint8Array(entries)
    this.keys = new Array<string | undefined>(entries).fill(undefined)
    this.table = new Uint32Array(memory.buffer, this.words[ENTRIES_OFFSET], entries * STRIDE)
  }

  /** Adds `incr` of `key` if the front can: 1 (the key is in the top-k), 0 (it is not), -1 (native code must). */
  add(key: string, incr: number): number {
    const e = this.held.get(key)
    if (e === undefined || incr >>> 0 !== incr) return -1
    const t = this.table
    const top = e < this.k
    const at = e * STRIDE
    if (t[at + 1] !== (top ? t[at] : this.outsideEpoch)) return -1 // a stale entry: its learned epoch is not current
    // A deferring key: only what is pending moves, its buckets do not. at + 7 is the buckets' largest count plus
    // what is deferred: the heap count to raise to, or outside the top-k the estimate, which must stay at or below
    // the heap's minimum (f64[4]; -1 when not full). Literals keep add under V8's inlining limit (460 bytes of
    // bytecode). A fading needs no check: only native code fades a local sketch, and it applies what is pending first.
    const deferred = this.deferred[e] + incr
    if (deferred === incr || deferred > DEFER_MAX || (!top && t[at + 7] + incr > this.f64[4]))
      return this.addSlow(e, at, top, incr)
    this.deferred[e] = deferred
    t[at + 7] += incr
    this.f64[3] += incr // the pending total
    return top ? 1 : 0
  }

  /** Adds every deferred increment to its buckets: native code is about to run. */
  flush(): void {
    for (let i = 0; i < this.deferringCount; i++) {
      const e = this.deferring[i]
      this.listed[e] = 0
      if (this.deferred[e] !== 0) this.addDeferred(e)
    }
    this.deferringCount = 0
    this.slowSinceFlush = 0
  }

  /** Native code just added `key`: remember where, if the front can serve it next time. */
  learn(key: string): void {
    // Only well-formed keys: two strings with lone surrogates can be one key in UTF-8 (both become U+FFFD).
    if (key.length > MAX_KEY_LENGTH || !(key as WellFormed).isWellFormed()) return
    const w = this.words
    const slot = w[LAST_SLOT]
    if (slot < this.k) {
      // A key's fingerprint and buckets never change.
      if (this.keys[slot] !== key && !this.hold(key, slot)) return
      this.table[slot * STRIDE + LEARNED] = this.table[slot * STRIDE]
      return
    }
    const threshold = this.f64[4]
    if (threshold < 0 || w[LAST_ESTIMATE] < threshold * LEARN_SHARE) return
    let e = this.held.get(key)
    if (e === undefined || e < this.k) {
      // A new key, or one that left the top-k: it takes the oldest entry outside it.
      e = this.k + this.nextOutside
      this.nextOutside = (this.nextOutside + 1) % (this.keys.length - this.k)
      if (!this.hold(key, e)) return
    } else {
      this.copyLast(e)
    }
    this.table[e * STRIDE + LEARNED] = this.outsideEpoch
  }

  /**
   * Keys outside the top-k are forgotten: a key entered the heap without this front seeing it (as bytes, or
   * through addMany), so one of them may now be in the top-k. Their entries stay, stale, until replaced.
   */
  forgetOutside(): void {
    this.outsideEpoch = (this.outsideEpoch + 1) >>> 0
    if (this.outsideEpoch !== 0) return
    // After 2^32 forgettings an entry's epoch could come back: empty them for real.
    for (let e = this.k; e < this.keys.length; e++) this.release(e)
  }

  /** Forgets every key (after close). */
  clear(): void {
    this.held.clear()
    this.byFingerprint.clear()
    this.keys.fill(undefined)
  }

  /** An add of a key that is not deferring: it begins to when the key owns its buckets. */
  private addSlow(e: number, at: number, top: boolean, incr: number): number {
    // Deferring up to DEFER_MAX, or to the heap's minimum: native code, which the deferred increment reaches first.
    if (this.deferred[e] !== 0) return -1
    const t = this.table
    const limit = top ? MAX_COUNT : this.f64[4]
    // The pending heap count: at least 1 once set, 0 while the slot is not in the dirty list.
    const raised = top ? t[at + 7] : 0
    let max = ownedMax(this.sketch, t, at)
    const warm = ++this.slowSinceFlush > DEFER_AFTER
    if (warm && max >= 0 && max + incr <= limit && incr !== 0 && incr <= DEFER_MAX && max + incr >= raised) {
      this.deferred[e] = incr
      if (this.listed[e] === 0) {
        this.listed[e] = 1
        this.deferring[this.deferringCount++] = e
      }
      max += incr
      if (!top) t[at + 7] = max
    } else if (max >= 0 && max + incr <= limit) {
      raiseOwned(this.sketch, t, at, incr)
      max += incr
    } else if ((max = this.contested(at, incr, limit)) < 0) {
      return -1
    }
    this.f64[3] += incr
    if (!top) return 0
    if (max > raised) {
      if (raised === 0) this.words[this.dirtyList + this.words[0]++] = e // words[0]: the dirty count
      t[at + 7] = max
    }
    return 1
  }

  /**
   * Adds what the owner of bucket b deferred to its buckets, if it is deferring (the owner is the held key with the
   * bucket's fingerprint: no other held key has it). Returns whether the bucket's count can have changed.
   */
  private settleOwner(b: number): boolean {
    const owner = this.byFingerprint.get(this.sketch[b + 1])
    if (owner === undefined || this.deferred[owner] === 0) return false
    this.addDeferred(owner)
    return true
  }

  /** Adds what entry e deferred to its buckets (before another key's add reads or decays them). */
  private addDeferred(e: number): void {
    const deferred = this.deferred[e]
    this.deferred[e] = 0
    const at = e * STRIDE
    for (let row = 0; row < this.depth; row++) this.sketch[this.table[at + BUCKETS + row]] += deferred
  }

  /**
   * An add of `incr` to a key that does not own all its buckets: native code's rule row by row (UpdateRow), with
   * the coin flips of heavy_keeper_decay.cc for a bucket another key owns, drawn from native code's sequence.
   * First checks, writing nothing, that the largest count the key can end with is at most `limit`. Returns that
   * count, or -1.
   */
  private contested(at: number, incr: number, limit: number): number {
    if (incr === 0 || incr > COIN_FLIP_INCR) return -1
    const s = this.sketch
    const t = this.table
    const f = t[at + FINGERPRINT]
    let bound = incr // a bucket taken (empty, or decayed to 0) holds at most incr
    for (let row = 0; row < this.depth; row++) {
      const b = t[at + BUCKETS + row]
      if (s[b + 1] === f) bound = Math.max(bound, s[b] + incr)
    }
    if (bound > limit) return -1
    let max = 0
    for (let row = 0; row < this.depth; row++) {
      const b = t[at + BUCKETS + row]
      let count = s[b]
      let mine: number
      if (count === 0 || s[b + 1] === f) {
        mine = count + incr
      } else {
        // Another key's bucket, whose count may lack what its owner deferred: from DECAY_TABLE - 1 on, every count
        // draws against the same probability, so the owner's buckets are brought up to date only below that, or to
        // take a unit off. Most flips off a hot key's bucket thus leave it deferring.
        let settled = count < DECAY_TABLE - 1 && this.settleOwner(b)
        if (settled) count = s[b]
        let left = incr
        for (; left > 0; left--) {
          if (drawUniform(this.words) >= this.decay[count < DECAY_TABLE - 1 ? count : DECAY_TABLE - 1]) continue
          if (!settled) {
            this.settleOwner(b)
            settled = true
            count = s[b]
          }
          if (--count === 0) break
        }
        if (count > 0) {
          if (settled) s[b] = count // the other key keeps the bucket; unsettled, it is unchanged
          continue
        }
        mine = left // the count reached 0: the key takes the bucket with the units left
      }
      s[b + 1] = f
      s[b] = mine
      if (mine > max) max = mine
    }
    return max
  }

  /**
   * Entry e now holds `key`, with the fingerprint and buckets native code just reported, unless another held key
   * has that fingerprint: then e holds nothing, and native code serves the key. Returns whether e holds it.
   */
  private hold(key: string, e: number): boolean {
    this.release(e)
    const elsewhere = this.held.get(key) // a key that entered or left the top-k
    if (elsewhere !== undefined) this.release(elsewhere)
    const fingerprint = this.words[LAST_FINGERPRINT]
    if (this.byFingerprint.has(fingerprint)) return false
    this.byFingerprint.set(fingerprint, e)
    this.held.set(key, e)
    this.keys[e] = key
    this.copyLast(e)
    return true
  }

  private release(e: number): void {
    const old = this.keys[e]
    if (old === undefined) return
    if (this.held.get(old) === e) this.held.delete(old)
    const fingerprint = this.table[e * STRIDE + FINGERPRINT]
    if (this.byFingerprint.get(fingerprint) === e) this.byFingerprint.delete(fingerprint)
    this.keys[e] = undefined
  }

  private copyLast(e: number): void {
    const w = this.words
    const at = e * STRIDE
    this.table[at + FINGERPRINT] = w[LAST_FINGERPRINT]
    for (let row = 0; row < FRONT_MAX_DEPTH; row++) {
      const reported = this.lastBuckets + Math.min(row, this.depth - 1)
      this.table[at + BUCKETS + row] = w[reported] * 2
    }
  }
}

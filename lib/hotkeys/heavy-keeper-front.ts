import type { SharedRegion } from '../shared/shared-region'

/** The front's header (native/core/hotkeys/heavy_keeper_front.h): u32 words, then the pending total (f64). */
const DIRTY_COUNT = 0
const SEEN = 1
const LAST_SLOT = 2
const LAST_FINGERPRINT = 3
const HEADER_BYTES = 24
const PENDING_TOTAL = 2 // f64 index (byte 16)
const MAX_COUNT = 0xffffffff
/** Longer keys go to native code every time: the front holds the keys it serves, and holds them small. */
const MAX_KEY_LENGTH = 104

/** Bytes of a front for k keys and depth rows (HeavyKeeperFront::Size). */
export function frontBytes(k: number, depth: number): number {
  return HEADER_BYTES + Math.ceil((depth * 4) / 8) * 8 + k * 16
}

/** Where the front finds the sketch and the fading generation in a local HeavyKeeper's region. */
export interface FrontPlacement {
  k: number
  width: number
  depth: number
  control: number
  sketch: number
}

/**
 * The JavaScript front of a local HeavyKeeper (docs/rules/heavykeeper.md, "The JavaScript front"): `add` of a
 * string key already in the top-k, done here without crossing into native code. It adds to the key's own buckets
 * (every row must hold the key's fingerprint: a decay or a claim draws random numbers, which only native code
 * does) and records the heap count to raise and the total to add, which native code applies before anything else
 * it does; so every result is the one native code alone would give. It holds at most k keys, one per heap slot.
 */
export class HeavyKeeperFront {
  /** The memory native code shares with this front. */
  readonly memory: Uint8Array
  private readonly words: Uint32Array
  private readonly totals: Float64Array
  private readonly sketch: Uint32Array
  private readonly generation: Uint32Array
  private readonly depth: number
  private readonly epochs: number
  private readonly dirty: number
  private readonly dirtyList: number
  private readonly pending: number
  private readonly lastBuckets: number
  private readonly slots = new Map<string, number>()
  private readonly keys: (string | undefined)[]
  private readonly keyEpochs: Uint32Array
  private readonly fingerprints: Uint32Array
  /** Per slot, per row: the index in `sketch` of the key's bucket's count word (the fingerprint word follows). */
  private readonly buckets: Uint32Array

  constructor(region: SharedRegion, p: FrontPlacement) {
    const bytes = frontBytes(p.k, p.depth)
    this.memory = new Uint8Array(bytes)
    this.words = new Uint32Array(this.memory.buffer)
    this.totals = new Float64Array(this.memory.buffer, 0, 3)
    this.sketch = new Uint32Array(region.buffer, region.base + p.sketch, p.width * p.depth * 2)
    this.generation = new Uint32Array(region.buffer, region.base + p.control, 1)
    this.depth = p.depth
    this.lastBuckets = HEADER_BYTES / 4
    this.epochs = this.lastBuckets + Math.ceil((p.depth * 4) / 8) * 2
    this.dirty = this.epochs + p.k
    this.dirtyList = this.dirty + p.k
    this.pending = this.dirtyList + p.k
    this.keys = new Array<string | undefined>(p.k).fill(undefined)
    this.keyEpochs = new Uint32Array(p.k)
    this.fingerprints = new Uint32Array(p.k)
    this.buckets = new Uint32Array(p.k * p.depth)
  }

  /** Adds `incr` of `key` if the front can (the key is in the top-k and owns its buckets); else false. */
  add(key: string, incr: number): boolean {
    const slot = this.slots.get(key)
    if (slot === undefined) return false
    const w = this.words
    if (w[this.epochs + slot] !== this.keyEpochs[slot] || this.generation[0] !== w[SEEN]) return false
    if (incr >>> 0 !== incr) return false // not a count: native code reports it
    const sketch = this.sketch
    const fingerprint = this.fingerprints[slot]
    const first = slot * this.depth
    const last = first + this.depth
    for (let i = first; i < last; i++) {
      const at = this.buckets[i]
      const count = sketch[at]
      if (sketch[at + 1] !== fingerprint || count === 0 || count + incr > MAX_COUNT) return false
    }
    let max = 0
    for (let i = first; i < last; i++) {
      const at = this.buckets[i]
      const count = sketch[at] + incr
      sketch[at] = count
      if (count > max) max = count
    }
    if (w[this.dirty + slot] === 0) {
      w[this.dirty + slot] = 1
      w[this.dirtyList + w[DIRTY_COUNT]] = slot
      w[DIRTY_COUNT] += 1
    }
    if (max > w[this.pending + slot]) w[this.pending + slot] = max
    this.totals[PENDING_TOTAL] += incr
    return true
  }

  /** Native code just said `key` is in the top-k: remember where, unless the front already does. */
  learn(key: string): void {
    if (key.length > MAX_KEY_LENGTH) return
    const w = this.words
    const slot = w[LAST_SLOT]
    if (slot >= this.keys.length) return
    const epoch = w[this.epochs + slot]
    const old = this.keys[slot]
    if (old === key && this.keyEpochs[slot] === epoch) return
    if (old !== undefined && this.slots.get(old) === slot) this.slots.delete(old)
    this.slots.set(key, slot)
    this.keys[slot] = key
    this.keyEpochs[slot] = epoch
    this.fingerprints[slot] = w[LAST_FINGERPRINT]
    for (let row = 0; row < this.depth; row++) this.buckets[slot * this.depth + row] = w[this.lastBuckets + row] * 2
  }

  /** Forgets every key (after close). */
  clear(): void {
    this.slots.clear()
    this.keys.fill(undefined)
  }
}

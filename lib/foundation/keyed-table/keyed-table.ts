import type { SharedRegion } from '../regions/shared-region'
import { HEAVY_SAMPLE, HeavyKeys } from './heavy-keys'
import { fingerprintKey } from './key-fingerprint'
import { COUNTER, KEYED, type KeyedTablePlacement } from './keyed-table-layout'

/** Replaces a table's fingerprint (tests that need two keys to collide): writes the key's two words to `out`. */
export type FingerprintFunction = (key: string, out: Int32Array) => void

export type CounterName = keyof typeof COUNTER

const BUCKET_WORDS = KEYED.bucketSlots * KEYED.slotWords
const SLOTS = KEYED.bucketSlots
const TWO_32 = 4294967296

/** A claim's mark (docs/rules/keyed-table.md): bit 31 set, the low 31 bits its start, so one word holds both. */
export function claimMark(ms: number): number {
  return ms | 0x80000000
}

/** Ms since the claim `mark` started at `nowMs`, in 31-bit wrap-around. */
function claimAge(nowMs: number, mark: number): number {
  return ((nowMs - mark) << 1) >> 1
}

/**
 * The keyed table (docs/rules/keyed-table.md): every key of a collection in one block of fixed-size slots, a plain
 * buffer when local, one region when shared; no per-key file, mapping or object. This base finds a key's slot by its
 * fingerprint and keeps the table's counters and heaviest keys; the kinds of slot (RateTable's arrival times, a
 * count table's requests in flight) decide, update and claim. A shared table is read and written lock-free:
 * compare-and-swap on each word that decides, and every loop bounded.
 */
export class KeyedTable {
  declare readonly region: SharedRegion
  declare readonly shared: boolean
  declare readonly buckets: number
  declare readonly maxKeyLength: number
  declare protected readonly i32: Int32Array
  declare protected readonly f64: Float64Array
  /** i32 index of the first slot's first word. */
  declare protected readonly slots: number
  /** The time origin (ms on the members' clock) every member counts ticks from. */
  declare protected readonly origin: number
  declare private readonly k0: number
  declare private readonly k1: number
  declare private readonly words: Int32Array
  declare private readonly injected: FingerprintFunction | undefined
  /** f64 index of this member's counter lane, and the lane stride in cells. */
  declare private readonly counters: number
  declare private readonly counterFirst: number
  declare private readonly counterStride: number
  declare private readonly heavy: HeavyKeys
  /** The located key: its tag and check words, and the i32 index of its home and alternate buckets. */
  protected tag = 0
  protected check = 0
  protected home = 0
  protected alt = 0
  /** After find(): the i32 index of a claimed slot seen in the key's buckets, or -1. */
  protected claimed = -1
  private refusals = 0

  constructor(region: SharedRegion, p: KeyedTablePlacement, maxKeyLength: number, hash?: FingerprintFunction) {
    const at = (offset: number) => region.f64[(region.base + offset) / 8]
    this.region = region
    this.shared = region.shared
    this.buckets = p.buckets
    this.maxKeyLength = maxKeyLength
    this.i32 = region.i32
    this.f64 = region.f64
    this.slots = (region.base + p.slots) >> 2
    this.origin = at(p.origin)
    this.k0 = at(p.seed) | 0
    this.k1 = at(p.seed + 8) | 0
    this.words = new Int32Array(2)
    this.injected = hash
    this.counterFirst = (region.base + p.counters.offset) / 8
    this.counterStride = p.counters.stride / 8
    this.counters = this.counterFirst + region.member * this.counterStride
    this.heavy = new HeavyKeys(region, p.heavy)
  }

  /** Fingerprints `key` and notes where it may live (tag, check, home, alt). */
  protected locate(key: string): void {
    const w = this.words
    if (this.injected === undefined) fingerprintKey(key, this.k0, this.k1, w)
    else this.injected(key, w)
    const a = w[0]
    const b = w[1]
    const buckets = this.buckets
    this.tag = a & 0x7fffffff || 1
    this.check = b
    // Products of a 32-bit word and at most 2^21 buckets: exact in a double, as native/core/keyed/key_fingerprint.cc.
    const home = Math.floor(((b >>> 0) * buckets) / TWO_32)
    let alt = home
    if (buckets > 1) {
      const spread = Math.floor(((((a << 16) | (a >>> 16)) >>> 0) * (buckets - 1)) / TWO_32)
      alt = (home + 1 + spread) % buckets
    }
    this.home = this.slots + home * BUCKET_WORDS
    this.alt = this.slots + alt * BUCKET_WORDS
  }

  /** The i32 index of the located key's slot, or -1 (then `claimed` is a claimed slot of its buckets, or -1). */
  protected find(): number {
    const s = this.i32
    const tag = this.tag
    const check = this.check
    this.claimed = -1
    let i = this.home
    for (let n = 0; n < SLOTS; n++, i += 4) {
      const t = s[i]
      if (t === tag && s[i + 1] === check) return i
      if (t < 0 && this.claimed < 0) this.claimed = i
    }
    if (this.alt === this.home) return -1
    i = this.alt
    for (let n = 0; n < SLOTS; n++, i += 4) {
      const t = s[i]
      if (t === tag && s[i + 1] === check) return i
      if (t < 0 && this.claimed < 0) this.claimed = i
    }
    return -1
  }

  /**
   * Waits (a bounded number of reads) for the claimed slot `i` to be published; a claim older than claimBreakMs (its
   * claimant died or stopped) is broken, the slot empty again. False when it stays claimed: the caller gives up.
   */
  protected settleClaim(i: number, nowMs: number): boolean {
    const s = this.i32
    for (let spin = 0; spin < KEYED.claimSpins; spin++) if (Atomics.load(s, i) >= 0) return true
    const claim = Atomics.load(s, i)
    if (claim >= 0) return true
    const age = claimAge(nowMs, claim)
    if (age <= KEYED.claimBreakMs && age >= -KEYED.claimBreakMs) return false
    if (Atomics.compareExchange(s, i, claim, 0) === claim) this.count(COUNTER.brokenClaims)
    return true
  }

  /** Milliseconds since the origin, wrapped to 32 bits (a claim's start). */
  protected msOf(now: number): number {
    return (now - this.origin) | 0
  }

  /** Adds one to this member's counter `c` (a COUNTER). */
  protected count(c: number): void {
    this.f64[this.counters + c]++
  }

  /** A refusal of the located `key`: counted, and one in HEAVY_SAMPLE recorded among the heaviest keys. */
  protected refuse(key: string): false {
    this.f64[this.counters + COUNTER.refused]++
    if (++this.refusals === HEAVY_SAMPLE) {
      this.refusals = 0
      this.heavy.record(key, this.tag, this.check)
    }
    return false
  }

  /** Counter `name` of this member alone (what a process reports to its metrics: summed over processes, the host's). */
  own(name: CounterName): number {
    return this.f64[this.counters + COUNTER[name]]
  }

  /** Counter `name` summed over every member of the table. */
  total(name: CounterName): number {
    const c = COUNTER[name]
    const lanes = this.region.laneHighWater()
    let sum = 0
    for (let lane = 0; lane < lanes; lane++) sum += this.f64[this.counterFirst + lane * this.counterStride + c]
    return sum
  }

  /** Keys holding a slot: empty slots claimed, published claims only (an estimate while claims are under way). */
  get size(): number {
    return Math.min(this.capacity, this.total('created'))
  }

  get capacity(): number {
    return this.buckets * SLOTS
  }

  /** The heaviest keys listed now (by refusals), the heaviest first. */
  heaviest(limit?: number): ReturnType<HeavyKeys['list']> {
    return this.heavy.list(limit)
  }

  /** Whether `key` holds a slot now. */
  holds(key: string): boolean {
    if (typeof key !== 'string' || key.length > this.maxKeyLength) return false
    this.locate(key)
    return this.find() >= 0
  }

  close(): void {
    this.region.close()
  }
}

import type { SharedRegion } from '../regions/shared-region'
import { KEYED } from './keyed-table-layout'

/** One of a table's heaviest keys: its text (the first units of it) and the refusals counted for it. */
export interface HeavyKey {
  key: string
  /** Refusals counted for the key (sampled: an estimate). */
  refused: number
  /** Only the key's first units are kept (it was longer). */
  truncated?: true
}

/** One refusal in SAMPLE is recorded: the shed path stays about as cheap as the admit path. */
export const HEAVY_SAMPLE = 8

const WORDS = KEYED.heavyEntrySize / 4
const TEXT = KEYED.heavyTextUnits

/**
 * The heaviest keys of a keyed table (docs/rules/keyed-table.md, "Heaviest keys"): a two-way list of
 * `heavyEntries` entries in the table's region, each a key's fingerprint, a count and the key's first units. A
 * sampled refusal adds one to its key's entry, or knocks one off the lighter entry of its pair; the key whose count
 * falls to nothing is replaced. Writers do not lock: a reader checks the entry's tag before and after, and a torn entry is skipped.
 * Keys come from requests: readers escape them before a terminal shows them (`bulwark top`).
 */
export class HeavyKeys {
  declare private readonly i32: Int32Array
  declare private readonly u16: Uint16Array
  /** i32 index of entry 0. */
  declare private readonly base: number

  constructor(region: SharedRegion, offset: number) {
    this.i32 = region.i32
    this.u16 = new Uint16Array(region.buffer)
    this.base = (region.base + offset) >> 2
  }

  /** Counts one sampled refusal of `key`, whose fingerprint words are `tag` and `check`. */
  record(key: string, tag: number, check: number): void {
    const s = this.i32
    // Two entries a key may use (two ways): two heavy keys that map to one pair both stay listed.
    const first = this.base + (check & (KEYED.heavyEntries - 2)) * WORDS
    const second = first + WORDS
    const mine =
      s[first] === tag && s[first + 1] === check ? first : s[second] === tag && s[second + 1] === check ? second : -1
    if (mine >= 0) {
      s[mine + 2]++
      return
    }
    const e = s[second + 2] < s[first + 2] ? second : first
    if (s[e + 2] > 1) {
      s[e + 2]--
      return
    }
    s[e] = 0
    const units = key.length < TEXT ? key.length : TEXT
    const text = (e + KEYED.heavyWords) * 2
    for (let i = 0; i < units; i++) this.u16[text + i] = key.charCodeAt(i)
    s[e + 3] = key.length
    s[e + 1] = check
    s[e + 2] = 1
    s[e] = tag
  }

  /** The keys listed now, the most refused first (at most `limit`). */
  list(limit: number = KEYED.heavyEntries): HeavyKey[] {
    const s = this.i32
    const out: HeavyKey[] = []
    for (let n = 0; n < KEYED.heavyEntries; n++) {
      const e = this.base + n * WORDS
      const tag = s[e]
      if (tag === 0) continue
      const count = s[e + 2]
      const length = s[e + 3]
      const units = Math.max(0, Math.min(length, TEXT))
      const text = (e + KEYED.heavyWords) * 2
      const key = String.fromCharCode(...this.u16.subarray(text, text + units))
      if (s[e] !== tag || count <= 0) continue // rewritten while read, or garbage
      const item: HeavyKey = { key, refused: count * HEAVY_SAMPLE }
      if (length > TEXT) item.truncated = true
      out.push(item)
    }
    return out.sort((a, b) => b.refused - a.refused).slice(0, limit)
  }
}

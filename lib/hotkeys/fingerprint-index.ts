/**
 * The HeavyKeeper front's entries by fingerprint (a 32-bit hash, any value): open addressing with linear probing
 * over typed arrays, at most two thirds full. A Map did the same at 2-3 % of an add over a million cold keys, where most
 * adds hold or release an entry.
 */
export class FingerprintIndex {
  private readonly fingerprints: Uint32Array
  /** Entry + 1 per cell; 0: empty. */
  private readonly entries: Uint32Array
  private readonly mask: number
  private readonly shift: number

  /** An index of at most `capacity` fingerprints. */
  constructor(capacity: number) {
    const cells = 2 ** Math.ceil(Math.log2(Math.max(2, capacity * 1.5)))
    this.fingerprints = new Uint32Array(cells)
    this.entries = new Uint32Array(cells)
    this.mask = cells - 1
    this.shift = 32 - Math.log2(cells)
  }

  /** The entry that holds `fingerprint`, or -1. */
  get(fingerprint: number): number {
    for (let i = this.home(fingerprint); ; i = (i + 1) & this.mask) {
      const entry = this.entries[i]
      if (entry === 0) return -1
      if (this.fingerprints[i] === fingerprint) return entry - 1
    }
  }

  /** Records that `entry` holds `fingerprint`, which no entry holds now. */
  set(fingerprint: number, entry: number): void {
    let i = this.home(fingerprint)
    while (this.entries[i] !== 0) i = (i + 1) & this.mask
    this.fingerprints[i] = fingerprint
    this.entries[i] = entry + 1
  }

  /** Forgets `fingerprint` if `entry` holds it. */
  delete(fingerprint: number, entry: number): void {
    let i = this.home(fingerprint)
    for (; this.entries[i] !== 0; i = (i + 1) & this.mask) {
      if (this.fingerprints[i] === fingerprint) break
    }
    if (this.entries[i] !== entry + 1) return
    // Backward shift: move later cells of the run into the hole when their home does not lie between the hole
    // and them, so that every look-up still meets its fingerprint before an empty cell.
    let hole = i
    for (let j = (i + 1) & this.mask; this.entries[j] !== 0; j = (j + 1) & this.mask) {
      const home = this.home(this.fingerprints[j])
      if (((j - home) & this.mask) < ((j - hole) & this.mask)) continue
      this.fingerprints[hole] = this.fingerprints[j]
      this.entries[hole] = this.entries[j]
      hole = j
    }
    this.entries[hole] = 0
  }

  /** Forgets every fingerprint. */
  clear(): void {
    this.entries.fill(0)
  }

  /** A fingerprint's first cell: its bits mixed, since the low bits also pick its row-0 bucket. */
  private home(fingerprint: number): number {
    return Math.imul(fingerprint, 0x9e3779b1) >>> this.shift
  }
}

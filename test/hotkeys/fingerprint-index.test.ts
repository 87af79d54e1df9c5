// The HeavyKeeper front's fingerprint index must answer as a Map would, through deletions in the middle of probe runs.
import { describe, expect, it } from 'vitest'

import { FingerprintIndex } from '../../lib/hotkeys/fingerprint-index'

/** A deterministic source of 32-bit values (xorshift32). */
function values(seed: number): () => number {
  let x = seed
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return x >>> 0
  }
}

describe('FingerprintIndex', () => {
  it('answers as a Map does over random holds and releases, up to its capacity', () => {
    const capacity = 64
    const index = new FingerprintIndex(capacity)
    const reference = new Map<number, number>()
    const next = values(7)
    // 96 fingerprints for 64 places in 128 cells: the index runs half full, where probe runs form and deletions
    // land inside them.
    const pool = Array.from({ length: 96 }, () => next())
    pool[0] = 0
    for (let step = 0; step < 20_000; step++) {
      const fingerprint = pool[next() % pool.length]
      const held = reference.get(fingerprint)
      if (held !== undefined) {
        index.delete(fingerprint, held)
        reference.delete(fingerprint)
      } else if (reference.size < capacity) {
        const entry = next() % 1000
        index.set(fingerprint, entry)
        reference.set(fingerprint, entry)
      }
      if (step % 97 === 0) for (const f of pool) expect(index.get(f)).toBe(reference.get(f) ?? -1)
    }
  })

  it('leaves a fingerprint another entry holds when asked to forget it for the wrong entry', () => {
    const index = new FingerprintIndex(4)
    index.set(42, 3)
    index.delete(42, 2)
    expect(index.get(42)).toBe(3)
    index.delete(42, 3)
    expect(index.get(42)).toBe(-1)
  })

  it('forgets everything on clear()', () => {
    const index = new FingerprintIndex(8)
    for (let f = 0; f < 8; f++) index.set(f * 1_000_003, f)
    index.clear()
    for (let f = 0; f < 8; f++) expect(index.get(f * 1_000_003)).toBe(-1)
  })
})

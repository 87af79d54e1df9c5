/**
 * A key's fingerprint in a keyed table (docs/rules/keyed-table.md, "Fingerprints"): HalfSipHash-1-3 with a 64-bit
 * output, keyed by the table's secret seed, over the key's UTF-16 code units (two to a 32-bit word, as their
 * little-endian bytes). native/core/keyed/key_fingerprint.cc computes the same two words; a test checks that they
 * agree. The words go to `out[0]` and `out[1]`: nothing is allocated. The round is written out twice (absorbing and
 * finishing) rather than called: four state words cannot leave a function without an allocation.
 */
export function fingerprintKey(key: string, k0: number, k1: number, out: Int32Array): void {
  let v0 = k0 | 0
  let v1 = (k1 ^ 0xee) | 0
  let v2 = (k0 ^ 0x6c796765) | 0
  let v3 = (k1 ^ 0x74656462) | 0
  const length = key.length
  const pairs = length & ~1
  // The last word holds the byte length's low 8 bits on top, the odd code unit (if any) at the bottom.
  const last = (((length * 2) & 0xff) << 24) | (pairs < length ? key.charCodeAt(pairs) : 0)
  for (let i = 0; ; i += 2) {
    const m = i < pairs ? key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16) : last
    v3 ^= m
    v0 = (v0 + v1) | 0
    v1 = (v1 << 5) | (v1 >>> 27)
    v1 ^= v0
    v0 = (v0 << 16) | (v0 >>> 16)
    v2 = (v2 + v3) | 0
    v3 = (v3 << 8) | (v3 >>> 24)
    v3 ^= v2
    v0 = (v0 + v3) | 0
    v3 = (v3 << 7) | (v3 >>> 25)
    v3 ^= v0
    v2 = (v2 + v1) | 0
    v1 = (v1 << 13) | (v1 >>> 19)
    v1 ^= v2
    v2 = (v2 << 16) | (v2 >>> 16)
    v0 ^= m
    if (i >= pairs) break
  }
  v2 ^= 0xee
  for (let output = 0; output < 2; output++) {
    if (output === 1) v1 ^= 0xdd
    for (let round = 0; round < 3; round++) {
      v0 = (v0 + v1) | 0
      v1 = (v1 << 5) | (v1 >>> 27)
      v1 ^= v0
      v0 = (v0 << 16) | (v0 >>> 16)
      v2 = (v2 + v3) | 0
      v3 = (v3 << 8) | (v3 >>> 24)
      v3 ^= v2
      v0 = (v0 + v3) | 0
      v3 = (v3 << 7) | (v3 >>> 25)
      v3 ^= v0
      v2 = (v2 + v1) | 0
      v1 = (v1 << 13) | (v1 >>> 19)
      v1 ^= v2
      v2 = (v2 << 16) | (v2 >>> 16)
    }
    out[output] = v1 ^ v3
  }
}

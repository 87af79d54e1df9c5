const TWO_32 = 4294967296
const TWO_MINUS_53 = 1.1102230246251565e-16

/**
 * The next Uniform() of native code's RandomSource (xoshiro256**, core/util/random_source.cc) whose state is at
 * words[10..17], in 32-bit halves: the same 53 bits, hence the same double, and the state moved on the same way.
 * HeavyKeeper's front draws its coin flips here so that native code, taking the state back, continues the one
 * sequence (heavy_keeper_front.h). The state is four u64 (low word first), s0 to s3, at words 10 to 17, written
 * as literals: with a constant's name for each index this function's bytecode is 479 bytes, and Node 20 inlines
 * none above 460 into contested.
 */
export function drawUniform(w: Uint32Array): number {
  const s0l = w[10]
  const s0h = w[11]
  const s1l = w[12]
  const s1h = w[13]
  const s2l = w[14]
  const s2h = w[15]
  const s3l = w[16]
  const s3h = w[17]
  // result = rotl(s1 * 5, 7) * 9: the low halves multiplied as doubles (exact below 2^53), carries added above.
  const m5 = s1l * 5
  const m5h = (Math.imul(s1h, 5) + Math.floor(m5 / TWO_32)) >>> 0
  const rl = ((m5 << 7) | (m5h >>> 25)) >>> 0 // m5 << 7 takes m5's low 32 bits first
  const rh = (m5h << 7) | (m5 >>> 25)
  const m9 = rl * 9
  const m9h = (Math.imul(rh, 9) + Math.floor(m9 / TWO_32)) >>> 0
  const uniform = (m9h * 2097152 + (m9 >>> 11)) * TWO_MINUS_53 // (result >> 11) * 2^-53
  // The state: t = s1 << 17; s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45).
  const n2l = s2l ^ s0l
  const n2h = s2h ^ s0h
  const n3l = s3l ^ s1l
  const n3h = s3h ^ s1h
  w[10] = s0l ^ n3l
  w[11] = s0h ^ n3h
  w[12] = s1l ^ n2l
  w[13] = s1h ^ n2h
  w[14] = n2l ^ (s1l << 17)
  w[15] = n2h ^ ((s1h << 17) | (s1l >>> 15))
  w[16] = (n3h << 13) | (n3l >>> 19) // rotl 45: the halves swap, then rotl 13
  w[17] = (n3l << 13) | (n3h >>> 19)
  return uniform
}

// MurmurHash3 x86_32 (Austin Appleby's public-domain design): the hash the Go reference uses for HeavyKeeper
// fingerprints and bucket indexes, so a Node service and a Go service put a key in the same buckets.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bulwark {

uint32_t Murmur3X86_32(const uint8_t* data, size_t length, uint32_t seed);

// Murmur3X86_32 with seeds 0, 1, ..., count - 1 into out[0..count), in one pass: the per-block mixing does not
// depend on the seed, so it is done once for all of them (HeavyKeeper's fingerprint and row hashes).
void Murmur3X86_32Seeds(const uint8_t* data, size_t length, uint32_t count, uint32_t* out);

// hash % n, exactly, with two multiplications instead of a division (Lemire's fastmod); inverse = ModInverse(n).
inline uint64_t ModInverse(uint32_t n) { return UINT64_MAX / n + 1; }
inline uint32_t FastMod(uint32_t hash, uint64_t inverse, uint32_t n) {
  return static_cast<uint32_t>((static_cast<unsigned __int128>(inverse * hash) * n) >> 64);
}

}  // namespace bulwark

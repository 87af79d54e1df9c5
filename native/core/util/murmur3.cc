#include "core/util/murmur3.h"

#include <cstring>

namespace bulwark {

namespace {

inline uint32_t RotateLeft(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Final avalanche: every input bit affects every output bit.
inline uint32_t Mix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

constexpr uint32_t kC1 = 0xcc9e2d51u;
constexpr uint32_t kC2 = 0x1b873593u;

inline uint32_t MixBlock(uint32_t k) {
  k *= kC1;
  k = RotateLeft(k, 15);
  return k * kC2;
}

inline uint32_t Step(uint32_t h, uint32_t k) {
  h ^= k;
  h = RotateLeft(h, 13);
  return h * 5 + 0xe6546b64u;
}

// The mixed tail block (0 when there is none: xoring 0 leaves h as it is, as skipping it would).
inline uint32_t TailBlock(const uint8_t* tail, size_t length) {
  uint32_t k = 0;
  switch (length & 3) {
    case 3: k ^= uint32_t(tail[2]) << 16; [[fallthrough]];
    case 2: k ^= uint32_t(tail[1]) << 8; [[fallthrough]];
    case 1: k ^= tail[0]; return MixBlock(k);
  }
  return 0;
}

}  // namespace

uint32_t Murmur3X86_32(const uint8_t* data, size_t length, uint32_t seed) {
  uint32_t h = seed;
  const size_t blocks = length / 4;
  for (size_t i = 0; i < blocks; i++) {
    uint32_t k;
    std::memcpy(&k, data + i * 4, 4);  // little-endian hosts only (x64, arm64), like the reference
    h = Step(h, MixBlock(k));
  }
  h ^= TailBlock(data + blocks * 4, length);
  return Mix(h ^ static_cast<uint32_t>(length));
}

namespace {

// Seeds first .. first + N - 1; N fixed so that the compiler keeps the N states in registers.
template <uint32_t N>
void SeedGroup(const uint8_t* data, size_t length, uint32_t first, uint32_t* out) {
  uint32_t h[N];
  for (uint32_t s = 0; s < N; s++) h[s] = first + s;
  const size_t blocks = length / 4;
  for (size_t i = 0; i < blocks; i++) {
    uint32_t k;
    std::memcpy(&k, data + i * 4, 4);
    k = MixBlock(k);
    for (uint32_t s = 0; s < N; s++) h[s] = Step(h[s], k);
  }
  const uint32_t tail = TailBlock(data + blocks * 4, length) ^ static_cast<uint32_t>(length);
  for (uint32_t s = 0; s < N; s++) out[first + s] = Mix(h[s] ^ tail);
}

}  // namespace

void Murmur3X86_32Seeds(const uint8_t* data, size_t length, uint32_t count, uint32_t* out) {
  uint32_t seed = 0;
  for (; seed + 4 <= count; seed += 4) SeedGroup<4>(data, length, seed, out);
  for (; seed < count; seed++) SeedGroup<1>(data, length, seed, out);
}

}  // namespace bulwark

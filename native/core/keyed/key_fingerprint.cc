#include "core/keyed/key_fingerprint.h"

#include <chrono>

#include "core/platform/os_random.h"

namespace bulwark {

namespace {

inline uint32_t Rotl(uint32_t x, int b) { return (x << b) | (x >> (32 - b)); }

struct State {
  uint32_t v0, v1, v2, v3;
  void Round() {
    v0 += v1;
    v1 = Rotl(v1, 5);
    v1 ^= v0;
    v0 = Rotl(v0, 16);
    v2 += v3;
    v3 = Rotl(v3, 8);
    v3 ^= v2;
    v0 += v3;
    v3 = Rotl(v3, 7);
    v3 ^= v0;
    v2 += v1;
    v1 = Rotl(v1, 13);
    v1 ^= v2;
    v2 = Rotl(v2, 16);
  }
  void Absorb(uint32_t m, int rounds) {
    v3 ^= m;
    for (int i = 0; i < rounds; i++) Round();
    v0 ^= m;
  }
};

inline uint32_t LoadLe32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

uint64_t SplitMix(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

KeyFingerprint HalfSipHash(int compressionRounds, int finalRounds, uint32_t k0, uint32_t k1, const uint8_t* in,
                           size_t length) {
  State s{k0, k1 ^ 0xee, k0 ^ 0x6c796765, k1 ^ 0x74656462};
  size_t whole = length & ~size_t(3);
  for (size_t i = 0; i < whole; i += 4) s.Absorb(LoadLe32(in + i), compressionRounds);
  uint32_t last = uint32_t(length & 0xff) << 24;
  switch (length & 3) {
    case 3: last |= uint32_t(in[whole + 2]) << 16; [[fallthrough]];
    case 2: last |= uint32_t(in[whole + 1]) << 8; [[fallthrough]];
    case 1: last |= uint32_t(in[whole]); break;
    default: break;
  }
  s.Absorb(last, compressionRounds);
  s.v2 ^= 0xee;
  for (int i = 0; i < finalRounds; i++) s.Round();
  uint32_t a = s.v1 ^ s.v3;
  s.v1 ^= 0xdd;
  for (int i = 0; i < finalRounds; i++) s.Round();
  return {a, s.v1 ^ s.v3};
}

KeyFingerprint FingerprintUnits(uint32_t k0, uint32_t k1, const uint16_t* units, size_t count) {
  // Two code units per word, as their little-endian bytes: the same stream HalfSipHash reads from bytes.
  State s{k0, k1 ^ 0xee, k0 ^ 0x6c796765, k1 ^ 0x74656462};
  size_t pairs = count & ~size_t(1);
  for (size_t i = 0; i < pairs; i += 2) s.Absorb(uint32_t(units[i]) | uint32_t(units[i + 1]) << 16, 1);
  uint32_t last = uint32_t((count * 2) & 0xff) << 24;
  if (pairs < count) last |= units[pairs];
  s.Absorb(last, 1);
  s.v2 ^= 0xee;
  for (int i = 0; i < 3; i++) s.Round();
  uint32_t a = s.v1 ^ s.v3;
  s.v1 ^= 0xdd;
  for (int i = 0; i < 3; i++) s.Round();
  return {a, s.v1 ^ s.v3};
}

KeyPlace PlaceKey(KeyFingerprint f, uint32_t buckets) {
  int32_t tag = static_cast<int32_t>(f.a & 0x7fffffffu);
  if (tag == 0) tag = 1;
  uint32_t home = static_cast<uint32_t>((uint64_t(f.b) * buckets) >> 32);
  uint32_t alt = home;
  if (buckets > 1) {
    uint32_t spread = static_cast<uint32_t>((uint64_t(Rotl(f.a, 16)) * (buckets - 1)) >> 32);
    alt = (home + 1 + spread) % buckets;
  }
  return {tag, static_cast<int32_t>(f.b), home, alt};
}

void NewTableSeed(uint32_t* k0, uint32_t* k1) {
  uint64_t mix = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  mix ^= reinterpret_cast<uintptr_t>(&mix);
  uint64_t random = 0;
  // The OS's generator; should it fail, the clock and the address (ASLR) still vary the seed.
  if (OsRandomBytes(&random, sizeof random)) mix ^= random;
  uint64_t word = SplitMix(&mix);
  *k0 = static_cast<uint32_t>(word);
  *k1 = static_cast<uint32_t>(word >> 32);
  if ((*k0 | *k1) == 0) *k1 = 1;
}

}  // namespace bulwark

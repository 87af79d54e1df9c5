// A keyed table's fingerprint (docs/rules/keyed-table.md, "Fingerprints"): HalfSipHash against its published
// vectors, the table's form over UTF-16 units, where a fingerprint places a key, and the seeds.
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/keyed/key_fingerprint.h"
#include "core/keyed/keyed_layout.h"
#include "test/check.h"

using namespace bulwark;
namespace kl = keyed_layout;

namespace {

// HalfSipHash-2-4's published 64-bit vectors (key bytes 0..7, input bytes 0..n-1), first ten lengths.
void TestHalfSipHashVectors() {
  const uint8_t expected[10][8] = {
      {0x21, 0x8d, 0x1f, 0x59, 0xb9, 0xb8, 0x3c, 0xc8}, {0xbe, 0x55, 0x24, 0x12, 0xf8, 0x38, 0x73, 0x15},
      {0x06, 0x4f, 0x39, 0xef, 0x7c, 0x50, 0xeb, 0x57}, {0xce, 0x0f, 0x1a, 0x45, 0xf7, 0x06, 0x06, 0x79},
      {0xd5, 0xe7, 0x8a, 0x17, 0x5b, 0xe5, 0x2e, 0xa1}, {0xcb, 0x9d, 0x7c, 0x3f, 0x2f, 0x3d, 0xb5, 0x80},
      {0xce, 0x3e, 0x91, 0x35, 0x8a, 0xa2, 0xbc, 0x25}, {0xff, 0x20, 0x27, 0x28, 0xb0, 0x7b, 0xc6, 0x84},
      {0xed, 0xfe, 0xe8, 0x20, 0xbc, 0xe4, 0x85, 0x8c}, {0x5b, 0x51, 0xcc, 0xcc, 0x13, 0x88, 0x83, 0x07},
  };
  uint8_t input[16];
  for (int i = 0; i < 16; i++) input[i] = static_cast<uint8_t>(i);
  for (int n = 0; n < 10; n++) {
    KeyFingerprint f = HalfSipHash(2, 4, 0x03020100u, 0x07060504u, input, n);
    uint8_t out[8];
    for (int j = 0; j < 4; j++) {
      out[j] = static_cast<uint8_t>(f.a >> (8 * j));
      out[4 + j] = static_cast<uint8_t>(f.b >> (8 * j));
    }
    CHECK(std::memcmp(out, expected[n], 8) == 0);
  }
}

// The table's fingerprint of UTF-16 units is HalfSipHash-1-3 of their little-endian bytes.
void TestFingerprintUnits() {
  std::mt19937 rng(7);
  for (int n = 0; n < 40; n++) {
    std::vector<uint16_t> units(n);
    std::vector<uint8_t> bytes(2 * n);
    for (int i = 0; i < n; i++) {
      units[i] = static_cast<uint16_t>(rng());
      bytes[2 * i] = static_cast<uint8_t>(units[i]);
      bytes[2 * i + 1] = static_cast<uint8_t>(units[i] >> 8);
    }
    KeyFingerprint a = FingerprintUnits(11, 22, units.data(), n);
    KeyFingerprint b = HalfSipHash(1, 3, 11, 22, bytes.data(), bytes.size());
    CHECK(a.a == b.a && a.b == b.b);
  }
  // The seed changes everything.
  const uint16_t key[] = {'1', '.', '2', '.', '3', '.', '4'};
  KeyFingerprint x = FingerprintUnits(1, 2, key, 7);
  KeyFingerprint y = FingerprintUnits(1, 3, key, 7);
  CHECK(x.a != y.a && x.b != y.b);
  for (uint32_t buckets : {1u, 2u, 3u, 1000u, kl::kMaxBuckets}) {
    for (int i = 0; i < 1000; i++) {
      KeyPlace p = PlaceKey({static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())}, buckets);
      CHECK(p.tag > 0);
      CHECK(p.home < buckets && p.alt < buckets);
      CHECK(buckets == 1 || p.alt != p.home);
    }
  }
  uint32_t k0 = 0, k1 = 0, j0 = 0, j1 = 0;
  NewTableSeed(&k0, &k1);
  NewTableSeed(&j0, &j1);
  CHECK((k0 | k1) != 0);
  CHECK(k0 != j0 || k1 != j1);
}

}  // namespace

int main() {
  TestHalfSipHashVectors();
  TestFingerprintUnits();
  if (bulwark_test::g_failures) {
    std::fprintf(stderr, "%d checks failed\n", bulwark_test::g_failures);
    return 1;
  }
  std::printf("key_fingerprint_test: all checks passed\n");
  return 0;
}

// A key's fingerprint in a keyed table (docs/rules/keyed-table.md, "Fingerprints"): HalfSipHash-1-3 with a 64-bit
// output, keyed by the table's secret seed, over the key's UTF-16 code units (little-endian bytes). Without the
// seed a client cannot choose keys that collide or that crowd one bucket. lib/foundation/keyed-table/
// key-fingerprint.ts computes the same words in JavaScript.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bulwark {

struct KeyFingerprint {
  uint32_t a;  // the first output word
  uint32_t b;  // the second
};

// HalfSipHash-c-d (Aumasson and Bernstein) with a 64-bit output over `length` bytes, key (k0, k1).
KeyFingerprint HalfSipHash(int compressionRounds, int finalRounds, uint32_t k0, uint32_t k1, const uint8_t* in,
                           size_t length);

// The table's fingerprint of a key given as UTF-16 code units.
KeyFingerprint FingerprintUnits(uint32_t k0, uint32_t k1, const uint16_t* units, size_t count);

// Where a fingerprint lives: its tag and check words and its two buckets among `buckets`.
struct KeyPlace {
  int32_t tag;    // > 0
  int32_t check;  // any
  uint32_t home;
  uint32_t alt;  // == home when there is one bucket
};

KeyPlace PlaceKey(KeyFingerprint f, uint32_t buckets);

// Two random words for a new table's seed (never both zero): the OS's random source, mixed with the clock.
void NewTableSeed(uint32_t* k0, uint32_t* k1);

}  // namespace bulwark

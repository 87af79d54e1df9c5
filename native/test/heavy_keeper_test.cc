// Checks for the HeavyKeeper core outside Node, meant to run under the sanitizers (scripts/native-tests.sh builds
// and runs it with every core source).
//
// Murmur3 goldens, the exact-in-distribution decay against the reference's coin flips, the binomial sampler's
// moments, heap order and index under churn, and Create's refusal of bad configurations.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/hotkeys/heavy_keeper.h"
#include "core/hotkeys/heavy_keeper_decay.h"
#include "core/hotkeys/heavy_keeper_layout.h"
#include "core/hotkeys/top_k_heap.h"
#include "core/util/murmur3.h"
#include "core/util/random_source.h"
#include "test/check.h"

using namespace bulwark;

namespace {

uint32_t Hash(const char* s, uint32_t seed) {
  return Murmur3X86_32(reinterpret_cast<const uint8_t*>(s), std::strlen(s), seed);
}

void TestMurmur() {
  CHECK(Hash("", 0) == 0);
  CHECK(Hash("a", 0) == 1009084850u);
  CHECK(Hash("a", 1) == 1485495528u);
  CHECK(Hash("a", 4) == 2383563902u);
  CHECK(Hash("hello", 0) == 613153351u);
  CHECK(Hash("hello", 1) == 3142237357u);
  CHECK(Hash("hello", 4) == 1221526385u);
  // The one-pass multi-seed form agrees with the single-seed one for every tail length and seed count.
  const char* text = "the quick brown fox jumps over";
  for (size_t length = 0; length <= 30; length++) {
    for (uint32_t count = 1; count <= 9; count++) {
      uint32_t hashes[9];
      Murmur3X86_32Seeds(reinterpret_cast<const uint8_t*>(text), length, count, hashes);
      for (uint32_t s = 0; s < count; s++)
        CHECK(hashes[s] == Murmur3X86_32(reinterpret_cast<const uint8_t*>(text), length, s));
    }
  }
}

// Mean and variance of the decay outcome (count left, or -count when taken) by both methods.
void CompareDecay(uint32_t count, uint32_t incr, double decay) {
  double lookup[kDecayTableSize];
  for (int i = 0; i < kDecayTableSize; i++) lookup[i] = std::pow(decay, i);
  const int trials = 20000;
  RandomSource fast(1), slow(2);
  double sums[2] = {0, 0}, squares[2] = {0, 0}, taken[2] = {0, 0};
  for (int t = 0; t < trials; t++) {
    DecayOutcome a = Decay(count, incr, lookup, fast);
    // The reference's loop, unit by unit (Decay does this itself for increments up to 16).
    DecayOutcome b{count, false};
    for (uint32_t left = incr; left > 0 && !b.taken; left--)
      b = Decay(b.count, 1, lookup, slow), b.count = b.taken ? left : b.count;
    DecayOutcome o[2] = {a, b};
    for (int i = 0; i < 2; i++) {
      double v = o[i].taken ? -double(o[i].count) : double(o[i].count);
      sums[i] += v;
      squares[i] += v * v;
      taken[i] += o[i].taken;
    }
  }
  double m0 = sums[0] / trials, m1 = sums[1] / trials;
  double v0 = squares[0] / trials - m0 * m0, v1 = squares[1] / trials - m1 * m1;
  double se = std::sqrt((v0 + v1) / trials) + 1e-9;
  bool ok = std::fabs(m0 - m1) < 5 * se && std::fabs(taken[0] - taken[1]) / trials < 0.02 + 0.0;
  if (!ok)
    std::fprintf(stderr, "decay c=%u n=%u d=%g: mean %g vs %g (se %g), taken %g vs %g\n", count, incr, decay, m0, m1,
                 se, taken[0] / trials, taken[1] / trials);
  CHECK(ok);
}

void TestFastMod() {
  RandomSource rng(6);
  const uint32_t widths[] = {1, 2, 3, 7, 1000, 1024, 4096, 10000, 65535, 1u << 28, 4294967295u};
  for (uint32_t n : widths) {
    uint64_t inverse = ModInverse(n);
    for (int i = 0; i < 100000; i++) {
      uint32_t h = static_cast<uint32_t>(rng.Next());
      CHECK(FastMod(h, inverse, n) == h % n);
    }
    CHECK(FastMod(UINT32_MAX, inverse, n) == UINT32_MAX % n);
    CHECK(FastMod(0, inverse, n) == 0);
  }
}

void TestDecay() {
  CompareDecay(3, 40, 0.925);       // geometric waits, taken often
  CompareDecay(40, 60, 0.925);      // geometric waits, taken sometimes
  CompareDecay(300, 2000, 0.99);    // flat zone, binomial path (m = 46, n p = 154)
  CompareDecay(260, 5000, 0.995);   // flat zone stepwise (m = 6)
  CompareDecay(2000, 3000, 0.998);  // flat zone binomial, then the tail
  // O(1): the largest increment against the largest count returns at once.
  double lookup[kDecayTableSize];
  for (int i = 0; i < kDecayTableSize; i++) lookup[i] = std::pow(0.999, i);
  RandomSource rng(3);
  DecayOutcome d = Decay(UINT32_MAX, UINT32_MAX, lookup, rng);
  CHECK(d.count > 0);
}

void TestBinomial() {
  RandomSource rng(4);
  const uint64_t n = 1000000;
  const double p = 0.3;
  double sum = 0, sq = 0;
  const int trials = 4000;
  for (int i = 0; i < trials; i++) {
    double x = static_cast<double>(Binomial(rng, n, p));
    sum += x;
    sq += x * x;
  }
  double mean = sum / trials, var = sq / trials - mean * mean;
  CHECK(std::fabs(mean - n * p) < 5 * std::sqrt(n * p * (1 - p) / trials));
  CHECK(std::fabs(var / (n * p * (1 - p)) - 1) < 0.1);
}

void TestHeapChurn() {
  TopKHeap heap(50);
  RandomSource rng(5);
  std::map<std::string, uint64_t> shadow;
  for (int i = 0; i < 200000; i++) {
    std::string key = "k" + std::to_string(rng.Next() % 400);
    uint32_t hash = Murmur3X86_32(reinterpret_cast<const uint8_t*>(key.data()), key.size(), 0);
    int32_t slot = heap.Find(reinterpret_cast<const uint8_t*>(key.data()), key.size(), hash);
    uint64_t count = 1 + rng.Next() % 1000;
    if (slot >= 0) {
      CHECK(heap.entry(slot).key == key);
      heap.Raise(slot, count);
      shadow[key] = std::max(shadow[key], count);
    } else if (!heap.full() || count > heap.min().count) {
      ExpelledKey ex;
      bool expelled;
      heap.Insert(reinterpret_cast<const uint8_t*>(key.data()), key.size(), hash, count, false, false, &ex, &expelled);
      if (expelled) CHECK(shadow.erase(ex.key) == 1);
      shadow[key] = count;
    }
    if (i % 50000 == 49999) {
      std::vector<ExpelledKey> removed;
      std::vector<int32_t> freed;
      heap.Halve(3, &removed, &freed);
      for (auto& r : removed) CHECK(shadow.erase(r.key) == 1);
      for (auto& s : shadow) s.second >>= 3;
    }
  }
  std::vector<int32_t> sorted = heap.Sorted();
  CHECK(sorted.size() == shadow.size());
  for (size_t i = 0; i < sorted.size(); i++) {
    const TopKEntry& e = heap.entry(sorted[i]);
    CHECK(shadow.count(e.key) == 1 && shadow[e.key] == e.count);
    if (i > 0) CHECK(!heap.Less(sorted[i - 1], sorted[i]));
  }
}

void TestCreateRefuses() {
  std::vector<uint64_t> memory(4096);
  HeavyKeeperConfig c;
  c.k = 10;
  c.width = 64;
  c.depth = 4;
  c.decay = 0.9;
  c.memory = reinterpret_cast<uint8_t*>(memory.data());
  c.memorySize = memory.size() * 8;
  c.sketchOffset = 64;
  c.aliveOffset = 64 + 64 * 4 * 8;
  c.aliveStride = 8;
  c.lanesOffset = c.aliveOffset + 64;
  c.laneStride = heavy_keeper_layout::LaneSize(0);
  std::unique_ptr<HeavyKeeper> hk;
  CHECK(HeavyKeeper::Create(c, &hk).ok());
  HeavyKeeperConfig bad = c;
  bad.decay = 1;
  CHECK(!HeavyKeeper::Create(bad, &hk).ok());
  bad = c;
  bad.width = 0;
  CHECK(!HeavyKeeper::Create(bad, &hk).ok());
  bad = c;
  bad.width = 1u << 20;  // sketch larger than the memory
  CHECK(!HeavyKeeper::Create(bad, &hk).ok());
  bad = c;
  bad.shared = true;  // lanes too small for k published slots
  CHECK(!HeavyKeeper::Create(bad, &hk).ok());
}

}  // namespace

int main() {
  TestMurmur();
  TestFastMod();
  TestDecay();
  TestBinomial();
  TestHeapChurn();
  TestCreateRefuses();
  if (bulwark_test::g_failures) {
    std::fprintf(stderr, "%d checks failed\n", bulwark_test::g_failures);
    return 1;
  }
  std::printf("heavy_keeper_test: all checks passed\n");
  return 0;
}

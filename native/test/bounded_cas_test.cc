// Every wait on shared memory is bounded (docs/guide/trust.md): the compare-and-swap loops of the native core give
// up after kCasTries lost races instead of spinning for as long as another writer keeps changing the word. Meant to
// run under the sanitizers (scripts/native-tests.sh). An unbounded loop would hang here: an alarm fails the run.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/hotkeys/heavy_keeper.h"
#include "core/hotkeys/heavy_keeper_layout.h"
#include "core/util/raw_atomic.h"
#include "test/check.h"

using namespace bulwark;

namespace {

void OnAlarm(int) {
  const char message[] = "bounded_cas_test: a compare-and-swap loop did not return (unbounded)\n";
  (void)!write(2, message, sizeof message - 1);
  _exit(1);
}

// A writer that changes the word between every load and swap: each step rewrites it, so every swap loses.
void TestCasUpdateGivesUp() {
  uint64_t word = 7;
  int steps = 0;
  bool settled = CasUpdate(&word, [&](uint64_t current, uint64_t* next) {
    steps++;
    __atomic_store_n(&word, current ^ 1, __ATOMIC_RELAXED);  // the other writer, forever
    *next = 1000;
    return true;
  });
  CHECK(!settled);
  CHECK(steps == kCasTries);
  CHECK(word == (kCasTries % 2 == 0 ? 7u : 6u));  // left to the other writer, never our 1000

  // Uncontended: one step, the word moves.
  uint64_t calm = 3;
  CHECK(CasUpdate(&calm, [](uint64_t current, uint64_t* next) {
    *next = current * 2;
    return true;
  }));
  CHECK(calm == 6);
  // A step that declines leaves the word and counts as settled.
  CHECK(CasUpdate(&calm, [](uint64_t, uint64_t* next) {
    *next = 0;
    return false;
  }));
  CHECK(calm == 6);

  // Signed words (HeavyKeeper's fade epoch) too.
  int64_t epoch = -1;
  CHECK(CasUpdate(&epoch, [](int64_t current, int64_t* next) {
    *next = current + 5;
    return true;
  }));
  CHECK(epoch == 4);
}

void TestReplaceF64IfGivesUp() {
  double cell = 1;
  int compared = 0;
  // The comparison runs between the load and the swap: a writer advancing the cell there makes every swap lose.
  bool written = ReplaceF64If(&cell, 100.0, [&](double a, double b) {
    compared++;
    double moved = b == 1 ? 2 : 1;  // below 100 forever: only the bound ends the loop
    uint64_t bits;
    std::memcpy(&bits, &moved, sizeof bits);
    __atomic_store_n(reinterpret_cast<uint64_t*>(&cell), bits, __ATOMIC_RELAXED);
    return a > b;
  });
  CHECK(!written);
  CHECK(compared == kCasTries);
  CHECK(cell == (kCasTries % 2 == 0 ? 1 : 2));  // the other writer's value, never our 100

  double clock = 5;
  CHECK(MaxF64(&clock, 9));
  CHECK(clock == 9);
  CHECK(MaxF64(&clock, 2));  // not better: nothing to write, settled
  CHECK(clock == 9);
  CHECK(MinF64(&clock, 2));
  CHECK(clock == 2);
}

// A shared sketch whose buckets another thread keeps rewriting (a member gone wrong): adds and fadings still return,
// and every count stays within what was added.
void TestHeavyKeeperUnderHostileWriter() {
  namespace hl = heavy_keeper_layout;
  HeavyKeeperConfig c;
  c.k = 8;
  c.width = 16;
  c.depth = 2;
  c.decay = 0.9;
  c.shared = true;
  c.controlOffset = 0;
  c.sketchOffset = hl::kControlSize;
  c.aliveOffset = c.sketchOffset + size_t(c.width) * c.depth * hl::kBucketSize;
  c.aliveStride = 8;
  c.lanesOffset = c.aliveOffset + 64;
  c.laneStride = hl::LaneSize(c.k);
  c.laneCapacity = 1;
  std::vector<uint64_t> memory((c.lanesOffset + c.laneStride) / 8 + 1);
  c.memory = reinterpret_cast<uint8_t*>(memory.data());
  c.memorySize = memory.size() * 8;
  double alive = 1;
  std::memcpy(c.memory + c.aliveOffset, &alive, sizeof alive);
  std::unique_ptr<HeavyKeeper> hk;
  CHECK(HeavyKeeper::Create(c, &hk).ok());
  if (!hk) return;

  uint64_t* sketch = reinterpret_cast<uint64_t*>(c.memory + c.sketchOffset);
  int64_t* fadeEpoch = reinterpret_cast<int64_t*>(c.memory + hl::kFadeEpochOffset);
  const size_t buckets = size_t(c.width) * c.depth;
  std::atomic<bool> stop{false};
  std::thread hostile([&] {
    // Small counts under random owners, rewritten as fast as this thread can, and the fade claim pushed on.
    for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); i++) {
      __atomic_store_n(sketch + i % buckets, ((i * 2654435761u) << 32) | (i & 7), __ATOMIC_RELAXED);
      if ((i & 1023) == 0) __atomic_add_fetch(fadeEpoch, 1, __ATOMIC_RELAXED);
    }
  });
  const char* keys[] = {"alpha", "beta", "gamma", "delta"};
  for (int i = 0; i < 200000; i++) {
    const char* key = keys[i % 4];
    hk->Add(reinterpret_cast<const uint8_t*>(key), std::strlen(key), 1, false);
    if (i % 20000 == 0) {
      hk->Fading();
      hk->FadeOnce(i);
    }
  }
  stop.store(true);
  hostile.join();
  for (const char* key : keys) CHECK(hk->Count(reinterpret_cast<const uint8_t*>(key), std::strlen(key)) <= 200000);
}

}  // namespace

int main() {
  signal(SIGALRM, OnAlarm);
  alarm(60);
  TestCasUpdateGivesUp();
  TestReplaceF64IfGivesUp();
  TestHeavyKeeperUnderHostileWriter();
  if (bulwark_test::g_failures > 0) {
    std::fprintf(stderr, "bounded_cas_test: %d checks failed\n", bulwark_test::g_failures);
    return 1;
  }
  std::printf("bounded_cas_test: ok\n");
  return 0;
}

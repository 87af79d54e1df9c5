// The keyed table's protocol (docs/rules/keyed-table.md) under threads, garbage and wrapped clocks. Meant to run
// under the sanitizers (scripts/native-tests.sh); an alarm fails the run if any loop does not end.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/keyed/key_fingerprint.h"
#include "core/keyed/keyed_layout.h"
#include "core/keyed/keyed_table.h"
#include "test/check.h"

using namespace bulwark;
namespace kl = keyed_layout;

namespace {

void OnAlarm(int) {
  const char message[] = "keyed_table_test: a loop did not end (unbounded)\n";
  (void)!write(2, message, sizeof message - 1);
  _exit(1);
}

struct Block {
  explicit Block(uint32_t buckets) : buckets(buckets), words(size_t(buckets) * kl::kBucketSlots * kl::kSlotWords) {}
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(words.data()); }
  uint32_t buckets;
  std::vector<int32_t> words;
};

RateStep At(int32_t now, int32_t inc, int32_t tau, int32_t nowMs = 0) {
  return {now, static_cast<int32_t>(static_cast<uint32_t>(now) >> kl::kEpochShift), nowMs, inc, tau};
}

KeyPlace PlaceOf(const char* key, uint32_t buckets) {
  std::vector<uint16_t> units(key, key + std::strlen(key));
  return PlaceKey(FingerprintUnits(5, 6, units.data(), units.size()), buckets);
}

void TestGcraOneThread() {
  for (bool shared : {false, true}) {
    Block block(64);
    KeyedTable table(block.bytes(), block.buckets, shared);
    KeyedCounts counts;
    KeyPlace p = PlaceOf("203.0.113.7", block.buckets);
    const int32_t inc = 1024, tau = 10 * 1024;
    int admitted = 0;
    for (int i = 0; i < 50; i++) admitted += table.Acquire(p, At(5000, inc, tau), &counts) == RateOutcome::kAdmitted;
    CHECK(admitted == 10);
    CHECK(counts.created == 1);
    CHECK(table.Find(p) >= 0);
    // Three intervals later, three more.
    admitted = 0;
    for (int i = 0; i < 50; i++)
      admitted += table.Acquire(p, At(5000 + 3 * inc, inc, tau), &counts) == RateOutcome::kAdmitted;
    CHECK(admitted == 3);
    // Another key is independent.
    KeyPlace q = PlaceOf("203.0.113.8", block.buckets);
    CHECK(table.Acquire(q, At(5000, inc, tau), &counts) == RateOutcome::kAdmitted);
    CHECK(counts.created == 2);
  }
}

// Two keys with one fingerprint share one slot, hence one budget: the bounded effect of a collision.
void TestCollisionSharesBudget() {
  Block block(16);
  KeyedTable table(block.bytes(), block.buckets, true);
  KeyedCounts counts;
  KeyPlace p = PlaceOf("alice", block.buckets);
  KeyPlace twin = p;  // another key whose fingerprint collides
  int admitted = 0;
  for (int i = 0; i < 20; i++) {
    admitted += table.Acquire(p, At(0, 1024, 10 * 1024), &counts) == RateOutcome::kAdmitted;
    admitted += table.Acquire(twin, At(0, 1024, 10 * 1024), &counts) == RateOutcome::kAdmitted;
  }
  CHECK(admitted == 10);
  CHECK(counts.created == 1);
}

// Threads on one hot key at one instant: exactly the burst, never more, never fewer.
void TestThreadsExact() {
  Block block(1024);
  KeyedTable table(block.bytes(), block.buckets, true);
  const int kThreads = 8, kKeys = 200, kBurst = 100;
  std::vector<KeyPlace> places;
  for (int k = 0; k < kKeys; k++) places.push_back(PlaceOf(("key-" + std::to_string(k)).c_str(), block.buckets));
  std::atomic<int> admitted[kKeys];
  for (auto& a : admitted) a = 0;
  std::atomic<int> contended{0}, noSlot{0};
  std::atomic<uint64_t> created{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      KeyedCounts counts;
      while (!go.load()) {
      }
      for (int round = 0; round < 150; round++) {
        for (int k = 0; k < kKeys; k++) {
          int key = (k * 7 + t * 13) % kKeys;  // the threads meet on every key, new ones included
          RateOutcome o = table.Acquire(places[key], At(100000, 1024, kBurst * 1024), &counts);
          if (o == RateOutcome::kAdmitted) admitted[key]++;
          if (o == RateOutcome::kContended) contended++;
          if (o == RateOutcome::kNoSlot) noSlot++;
        }
      }
      created += counts.created;
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  // A key first claimed by two threads at once keeps one slot: no key ever gets a second budget.
  int exact = 0;
  for (auto& a : admitted) exact += a.load() == kBurst;
  // A contended take is a refusal that takes nothing: never an extra admission, and with 12 tries per permit every
  // key still reaches its burst (a preempted thread on a busy machine contends; that is no failure).
  for (auto& a : admitted) CHECK(a.load() <= kBurst);
  CHECK(created.load() == kKeys);
  CHECK(noSlot.load() == 0);
  std::printf("keyed_table_test: %d of %d keys admitted exactly %d (contended %d)\n", exact, kKeys, kBurst,
              contended.load());
  CHECK(exact == kKeys);
}

// Threads racing on the first request of one new key, round after round: the key gets one slot, never two (a
// thread that looked before another claimed and published a slot must not claim the next empty one).
void TestFirstClaimRace() {
  int duplicated = 0;
  int inexact = 0;
  for (int round = 0; round < 300; round++) {
    Block block(4);
    KeyedTable table(block.bytes(), block.buckets, true);
    KeyPlace p = PlaceOf(("new-" + std::to_string(round)).c_str(), block.buckets);
    std::atomic<int> ready{0}, admitted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
      threads.emplace_back([&] {
        KeyedCounts counts;
        ready++;
        while (ready.load() < 4) {
        }
        for (int i = 0; i < 50; i++)
          if (table.Acquire(p, At(0, 1024, 20 * 1024), &counts) == RateOutcome::kAdmitted) admitted++;
      });
    }
    for (auto& t : threads) t.join();
    int slots = 0;
    for (uint32_t i = 0; i < block.buckets * kl::kBucketSlots; i++)
      slots += block.words[i * kl::kSlotWords + kl::kTagWord] == p.tag;
    duplicated += slots != 1;
    inexact += admitted.load() != 20;
  }
  CHECK(duplicated == 0);
  CHECK(inexact == 0);
}

// Only an owner at rest gives its slot up, and a returning one only after a burst's span at rest; a table full of
// keys in debt sends new keys to the overflow.
void TestReuseOnlyAtRest() {
  Block block(1);  // one bucket of eight slots
  KeyedTable table(block.bytes(), block.buckets, true);
  KeyedCounts counts;
  std::vector<KeyPlace> keys;
  for (int k = 0; k < 10; k++) keys.push_back(PlaceOf(("k" + std::to_string(k)).c_str(), 1));
  // Eight keys each spend their whole burst of 2 (a second request: they are returning keys): none is at rest.
  for (int k = 0; k < 8; k++)
    for (int i = 0; i < 2; i++) CHECK(table.Acquire(keys[k], At(0, 1024, 2048), &counts) == RateOutcome::kAdmitted);
  CHECK(table.Acquire(keys[8], At(0, 1024, 2048), &counts) == RateOutcome::kNoSlot);
  CHECK(table.Acquire(keys[0], At(100, 1024, 2048), &counts) == RateOutcome::kRefused);  // still exhausted
  // Two intervals on, key 3 rests (it alone is not touched again): at rest, but returning and within its grace.
  for (int k = 0; k < 8; k++)
    for (int i = 0; i < 2 && k != 3; i++)
      CHECK(table.Acquire(keys[k], At(2048, 1024, 2048), &counts) == RateOutcome::kAdmitted);
  CHECK(table.Acquire(keys[8], At(2048, 1024, 2048), &counts) == RateOutcome::kNoSlot);
  // A burst's span later its slot goes to the new key; the exhausted keys keep their debt.
  for (int k = 0; k < 8; k++)
    for (int i = 0; i < 2 && k != 3; i++)
      CHECK(table.Acquire(keys[k], At(4096, 1024, 2048), &counts) == RateOutcome::kAdmitted);
  CHECK(table.Acquire(keys[8], At(4096, 1024, 2048), &counts) == RateOutcome::kAdmitted);
  CHECK(counts.reused == 1);
  CHECK(table.Find(keys[3]) < 0);
  CHECK(table.Find(keys[8]) >= 0);
  CHECK(table.Acquire(keys[0], At(4096, 1024, 2048), &counts) == RateOutcome::kRefused);
  // A key seen once is given up as soon as it is at rest: key 8 spent one permit, and rests one interval later.
  for (int k = 0; k < 8; k++)
    for (int i = 0; i < 2 && k != 3; i++)
      CHECK(table.Acquire(keys[k], At(6144, 1024, 2048), &counts) == RateOutcome::kAdmitted);
  CHECK(table.Acquire(keys[9], At(6144, 1024, 2048), &counts) == RateOutcome::kAdmitted);
  CHECK(counts.reused == 2);
  CHECK(table.Find(keys[8]) < 0);
}

// A state left for longer than its arrival time's wrap reads as at rest, however its 32 bits fall.
void TestStaleStateIsAtRest() {
  Block block(4);
  KeyedTable table(block.bytes(), block.buckets, false);
  KeyedCounts counts;
  KeyPlace p = PlaceOf("sleeper", block.buckets);
  const int32_t tau = 4 * 1024;
  for (int i = 0; i < 4; i++) table.Acquire(p, At(0, 1024, tau), &counts);
  CHECK(table.Acquire(p, At(0, 1024, tau), &counts) == RateOutcome::kRefused);
  // 2^32 ticks later the arrival time's bits read as a debt again; the epoch says how old the state is.
  int64_t later = (int64_t(1) << 32) + 10;
  RateStep step = {static_cast<int32_t>(later), static_cast<int32_t>(later >> kl::kEpochShift), 0, 1024, tau};
  CHECK(table.Acquire(p, step, &counts) == RateOutcome::kAdmitted);
}

// A claim whose claimant died is broken after a second; until then a key that may be the one claimed is refused.
void TestAbandonedClaim() {
  Block block(1);
  KeyedTable table(block.bytes(), 1, true);
  KeyedCounts counts;
  KeyPlace p = PlaceOf("victim", 1);
  // Every slot claimed by a member that died mid-claim at ms 10.
  for (uint32_t s = 0; s < kl::kBucketSlots; s++) {
    block.words[s * kl::kSlotWords + kl::kTagWord] = INT32_MIN | 10;
    block.words[s * kl::kSlotWords + kl::kCheckWord] = 77;
  }
  CHECK(table.Acquire(p, At(0, 1024, 4096, 500), &counts) == RateOutcome::kContended);
  CHECK(counts.brokenClaims == 0);
  CHECK(table.Acquire(p, At(0, 1024, 4096, 2000), &counts) == RateOutcome::kAdmitted);
  CHECK(counts.brokenClaims >= 1);
}

// A claim just made is waited for, never broken, whatever the slot's check word holds (an empty slot's 0, an owner's
// fingerprint): its start is in its mark. Also across the 31-bit wrap of the ms clock.
void TestFreshClaim() {
  const int32_t starts[] = {5000, INT32_MAX - 100};
  for (int32_t start : starts) {
    for (int32_t check : {0, 0x5eed1234, INT32_MIN}) {
      Block block(1);
      KeyedTable table(block.bytes(), 1, true);
      KeyedCounts counts;
      KeyPlace p = PlaceOf("fresh", 1);
      for (uint32_t s = 0; s < kl::kBucketSlots; s++) {
        block.words[s * kl::kSlotWords + kl::kTagWord] = INT32_MIN | start;
        block.words[s * kl::kSlotWords + kl::kCheckWord] = check;
      }
      int32_t soon = static_cast<int32_t>(static_cast<uint32_t>(start) + 200);
      CHECK(table.Acquire(p, At(0, 1024, 4096, soon), &counts) == RateOutcome::kContended);
      CHECK(counts.brokenClaims == 0);
      int32_t later = static_cast<int32_t>(static_cast<uint32_t>(start) + 2000);
      CHECK(table.Acquire(p, At(0, 1024, 4096, later), &counts) == RateOutcome::kAdmitted);
      CHECK(counts.brokenClaims >= 1);
    }
  }
}

// A peer writing garbage into the block: every call returns, nothing crashes, and the overflow word holds.
void TestGarbageWriter() {
  Block block(8);
  KeyedTable table(block.bytes(), block.buckets, true);
  std::atomic<bool> stop{false};
  std::thread vandal([&] {
    std::mt19937 rng(99);
    size_t n = block.words.size();
    while (!stop.load()) {
      size_t i = rng() % n;
      int32_t value = static_cast<int32_t>(rng());
      __atomic_store_n(&block.words[i], value, __ATOMIC_RELAXED);
    }
  });
  std::vector<std::thread> workers;
  std::atomic<long> calls{0};
  for (int t = 0; t < 4; t++) {
    workers.emplace_back([&, t] {
      KeyedCounts counts;
      std::mt19937 rng(t);
      for (int i = 0; i < 200000; i++) {
        KeyPlace p = PlaceKey({static_cast<uint32_t>(rng() % 64), 17}, block.buckets);
        table.Acquire(p, At(i, 1024, 8192, i / 1000), &counts);
        calls++;
      }
    });
  }
  for (auto& w : workers) w.join();
  stop = true;
  vandal.join();
  CHECK(calls.load() == 800000);
}

void TestOverflowWord() {
  int32_t words[2] = {0, 0};
  Block block(1);
  KeyedTable table(block.bytes(), 1, true);
  int admitted = 0;
  for (int i = 0; i < 100; i++)
    admitted += table.AcquireWord(words, At(1 << 20, 1024, 5 * 1024)) == RateOutcome::kAdmitted;
  CHECK(admitted == 5);
}

}  // namespace

int main() {
  signal(SIGALRM, OnAlarm);
  alarm(120);
  TestGcraOneThread();
  TestCollisionSharesBudget();
  TestThreadsExact();
  TestFirstClaimRace();
  TestReuseOnlyAtRest();
  TestStaleStateIsAtRest();
  TestAbandonedClaim();
  TestFreshClaim();
  TestGarbageWriter();
  TestOverflowWord();
  if (bulwark_test::g_failures) {
    std::fprintf(stderr, "%d checks failed\n", bulwark_test::g_failures);
    return 1;
  }
  std::printf("keyed_table_test: all checks passed\n");
  return 0;
}

// The keyed table's protocol over a block laid out by keyed_layout.h (docs/rules/keyed-table.md): finding a key's
// slot, claiming one for a new key (an empty slot, or one whose owner is at rest), and a GCRA decision with one
// compare-and-swap. lib/foundation/keyed-table/ runs the same protocol in JavaScript on the hot path; this one is
// what the C++ harnesses hammer with threads and garbage, and what the test natives run beside JavaScript writers
// on one block.
#pragma once
#include <cstdint>

#include "core/keyed/key_fingerprint.h"
#include "core/keyed/keyed_layout.h"

namespace bulwark {

// One decision's time and cost, in the table's ticks (docs/rules/keyed-table.md, "Time").
struct RateStep {
  int32_t now;    // ticks since the table's origin, wrapped to 32 bits
  int32_t epoch;  // the tick epoch of `now` (ticks >> kEpochShift, wrapped)
  int32_t nowMs;  // ms since the origin, wrapped (a claim's start)
  int32_t inc;    // ticks this request costs (> 0)
  int32_t tau;    // the burst's span in ticks (inc <= tau)
};

enum class RateOutcome {
  kAdmitted,
  kRefused,
  kNoSlot,  // no slot could be found or claimed: the caller decides on the overflow limit
  // Refused, bounded: the slot's state kept changing under every compare-and-swap, or a claim in the key's buckets
  // (perhaps of this very key, by another member) did not finish within kClaimSpins reads.
  kContended,
};

struct KeyedCounts {
  uint64_t created = 0;  // empty slots claimed
  uint64_t reused = 0;   // slots taken from an owner at rest
  uint64_t brokenClaims = 0;
};

// A state's epoch word: the epoch shifted left by one, the low bit kReturning.
inline int32_t EpochWord(int32_t epoch, bool returning) {
  return static_cast<int32_t>((static_cast<uint32_t>(epoch) << 1) | (returning ? keyed_layout::kReturning : 0));
}
// Epochs from the one an epoch word was written in to `epoch` (31-bit wrapping difference).
inline int32_t EpochAge(int32_t epochWord, int32_t epoch) {
  uint32_t diff = (static_cast<uint32_t>(epoch) << 1) - (static_cast<uint32_t>(epochWord) & ~1u);
  return static_cast<int32_t>(diff) >> 1;
}

// The debt (ticks) that a rate slot's state `tat`, with epoch word `written`, holds at `now`: 0 at rest.
inline int32_t RateDebt(int32_t tat, int32_t written, int32_t now, int32_t epoch) {
  int32_t age = EpochAge(written, epoch);
  if (age >= keyed_layout::kFreshEpochs || age < -keyed_layout::kEpochSkew) return 0;
  int32_t debt = static_cast<int32_t>(static_cast<uint32_t>(tat) - static_cast<uint32_t>(now));
  return debt > 0 && debt <= keyed_layout::kMaxDebt ? debt : 0;
}

class KeyedTable {
 public:
  // `slots`: buckets x kBucketSlots slots of 16 bytes, 4-byte aligned. `shared`: other threads or processes use the
  // block too (atomic words and the claim protocol); otherwise plain loads and stores.
  KeyedTable(uint8_t* slots, uint32_t buckets, bool shared)
      : words_(reinterpret_cast<int32_t*>(slots)), buckets_(buckets), shared_(shared) {}

  // A GCRA decision for the key at `place`: found or claimed, then one compare-and-swap of its state.
  RateOutcome Acquire(const KeyPlace& place, const RateStep& step, KeyedCounts* counts);
  // The same decision on a bare state word pair (the overflow limit): `words` points at state, epoch.
  RateOutcome AcquireWord(int32_t* words, const RateStep& step);
  // The word index of the key's slot, or -1.
  int64_t Find(const KeyPlace& place) const;

 private:
  enum class Step { kDone, kRetry };
  int32_t LoadAt(const int32_t* p) const;
  void StoreAt(int32_t* p, int32_t v);
  bool CasAt(int32_t* p, int32_t expected, int32_t desired);
  int32_t Load(int64_t i) const { return LoadAt(words_ + i); }
  void Store(int64_t i, int32_t v) { StoreAt(words_ + i, v); }
  bool Cas(int64_t i, int32_t expected, int32_t desired) { return CasAt(words_ + i, expected, desired); }
  int64_t Word(uint32_t bucket, uint32_t slot) const {
    return (int64_t(bucket) * keyed_layout::kBucketSlots + slot) * keyed_layout::kSlotWords;
  }
  int64_t FindOrClaimed(const KeyPlace& place, int64_t* claimed) const;
  int64_t PickTarget(const KeyPlace& place, const RateStep& step) const;
  int64_t PickIn(uint32_t bucket, const RateStep& step) const;
  bool SettleClaim(int64_t i, const RateStep& step, KeyedCounts* counts);
  RateOutcome Update(int64_t i, const KeyPlace& place, const RateStep& step, bool* relocate);
  Step Claim(int64_t i, const KeyPlace& place, const RateStep& step, KeyedCounts* counts, RateOutcome* out);

  int32_t* words_;
  uint32_t buckets_;
  bool shared_;
};

}  // namespace bulwark

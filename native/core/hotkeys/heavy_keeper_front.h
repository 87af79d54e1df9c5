// The JavaScript front of a local HeavyKeeper (docs/rules/heavykeeper.md, "The JavaScript front"): memory this
// instance shares with its own JavaScript object, through which `add` of a key native code has seen is done in
// JavaScript without crossing into native code.
//
// Native code tells the front, after each add, the key's heap slot (kNoSlot when it is not in the heap), fingerprint,
// estimate and buckets; it moves a slot's epoch on whenever the slot's key changes, publishes the fading generation
// it has caught up to, and the heap's threshold: its minimum count when full, -1 when not (a key outside the heap
// whose estimate stays at or below it stays out). The front then updates the key's buckets itself, by native code's
// rule: a bucket the key owns or finds empty is raised, another key's is decayed with the same coin flips, drawn
// from the same random sequence (the state lives here, native code takes it before its own draws and leaves it
// after, and the decay probabilities are native code's own table). It records the heap counts to raise and the
// total to add, which native code applies before anything else it does (Apply).
//
// Layout (u32 words unless said): header [dirty count, seen generation, last slot, last fingerprint, last estimate,
// entries offset], f64 pending total at byte 24, f64 heap threshold at byte 32, the random state (4 u64) at byte 40,
// the decay probabilities (kDecayTableSize f64) at byte 72, then depth u32 bucket indexes of the last add (rounded
// up to 8 bytes), the dirty list (k u32, rounded up to 8 bytes), and from the first 64-byte boundary after it (its
// byte offset in the header: the memory need not be aligned) one 32-byte entry per heap slot, so that an add of a
// key in the top-k touches one cache line besides the sketch: [slot epoch, epoch the front learned, fingerprint,
// the bucket indexes of 4 rows, pending count]. Native code writes the slot epoch and reads and clears the pending
// count; the rest is the front's (a slot is in the dirty list exactly when its pending count is above 0). The
// front may keep entries of its own (keys outside the top-k) after these.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/hotkeys/heavy_keeper_decay.h"
#include "core/util/random_source.h"

namespace bulwark {

class HeavyKeeperFront {
 public:
  // The layout above, once: the binding exports every one of these (native.layout.heavyKeeperFront) and the
  // TypeScript front checks its own against them when it loads.
  static constexpr size_t kDirtyCountWord = 0;
  static constexpr size_t kSeenWord = 1;
  static constexpr size_t kLastSlotWord = 2;
  static constexpr size_t kLastFingerprintWord = 3;
  static constexpr size_t kLastEstimateWord = 4;
  static constexpr size_t kEntriesOffsetWord = 5;
  static constexpr size_t kPendingTotalOffset = 24;
  static constexpr size_t kThresholdOffset = 32;
  static constexpr size_t kRandomOffset = 40;
  static constexpr size_t kDecayOffset = kRandomOffset + 32;
  static constexpr size_t kHeaderSize = kDecayOffset + kDecayTableSize * 8;
  static constexpr size_t kEntryAlign = 64;
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  static constexpr size_t kEntryWords = 8;
  static constexpr size_t kEntryEpoch = 0;
  static constexpr size_t kEntryLearned = 1;
  static constexpr size_t kEntryFingerprint = 2;
  static constexpr size_t kEntryBuckets = 3;
  static constexpr size_t kEntryPending = 7;
  // An entry holds the bucket indexes of this many rows: the front serves sketches of at most this depth.
  static constexpr size_t kEntryRows = kEntryPending - kEntryBuckets;
  // Bytes for k slots and depth rows: the entries' alignment included.
  static size_t Size(uint32_t k, uint32_t depth);

  HeavyKeeperFront() = default;
  // `memory` (Size(k, depth) bytes, 8-byte aligned) or nullptr for no front.
  HeavyKeeperFront(uint8_t* memory, uint32_t k, uint32_t depth);

  bool attached() const { return header_ != nullptr; }
  void SetSeen(uint32_t generation);
  // The key just added is in the heap at `slot` (or not in it: slot < 0), with estimate `count`: what the front
  // needs to add to it (bucket indexes per row).
  void Report(int32_t slot, uint32_t fingerprint, uint32_t count, const uint32_t* buckets);
  // The heap's minimum count when it is full, else -1.
  void SetThreshold(double threshold);
  // The decay probabilities by count (kDecayTableSize of them), for the front's coin flips.
  void SetDecay(const double* lookup);
  // The random sequence moves between the two sides: native code takes it before it draws, and leaves it after.
  void TakeRandom(RandomSource* rng) const {
    if (header_ != nullptr) rng->Restore(random_);
  }
  void LeaveRandom(const RandomSource& rng) {
    if (header_ != nullptr) rng.Save(random_);
  }
  // The key of `slot` changed (a new key, or none).
  void Moved(int32_t slot);
  // Hands each heap count the front raised to raise(slot, count), and returns the increments it added to the
  // total; both are then cleared.
  template <typename Raise>
  uint64_t Apply(Raise raise);

 private:
  uint32_t* header_ = nullptr;
  double* pendingTotal_ = nullptr;
  double* threshold_ = nullptr;
  uint64_t* random_ = nullptr;
  double* decay_ = nullptr;
  uint32_t* lastBuckets_ = nullptr;
  uint32_t* dirtyList_ = nullptr;
  uint32_t* entries_ = nullptr;
  uint32_t k_ = 0;
  uint32_t depth_ = 0;
};

template <typename Raise>
uint64_t HeavyKeeperFront::Apply(Raise raise) {
  if (header_ == nullptr) return 0;
  const uint32_t n = header_[kDirtyCountWord] < k_ ? header_[kDirtyCountWord] : k_;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t slot = dirtyList_[i];
    if (slot >= k_) continue;
    uint32_t& pending = entries_[slot * kEntryWords + kEntryPending];
    raise(static_cast<int32_t>(slot), pending);
    pending = 0;
  }
  header_[kDirtyCountWord] = 0;
  const double total = *pendingTotal_;
  *pendingTotal_ = 0;
  return total > 0 && total < 18446744073709551616.0 ? static_cast<uint64_t>(total) : 0;
}

}  // namespace bulwark

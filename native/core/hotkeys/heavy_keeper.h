// HeavyKeeper top-k (docs/rules/heavykeeper.md, with our fixes): a depth x width sketch of (fingerprint, count) buckets
// decayed exponentially by colliding keys, and a min-heap of the k heaviest keys seen.
//
// The sketch lives in memory the caller provides (a region's payload): with `shared`, every member of the region
// updates it with a compare-and-swap per bucket. Each member keeps its own heap (keys are bytes; they cannot be
// shared lock-free) ranked by the shared counts, and publishes it in its lane so that any member lists the host's
// top-k. Fading is host-wide: a generation number in the region tells members to halve their heaps and totals.
//
// Never throws, never aborts: Create validates everything and returns a Status.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/hotkeys/heavy_keeper_decay.h"
#include "core/hotkeys/heavy_keeper_front.h"
#include "core/hotkeys/heavy_keeper_lanes.h"
#include "core/hotkeys/top_k_heap.h"
#include "core/util/murmur3.h"
#include "core/util/random_source.h"
#include "core/util/status.h"

namespace bulwark {

struct HeavyKeeperConfig {
  uint32_t k = 0;
  uint32_t width = 0;
  uint32_t depth = 0;
  double decay = 0;
  uint64_t minCount = 0;
  uint64_t seed = 0;
  bool shared = false;        // CAS bucket updates; heap published in the lane
  uint8_t* memory = nullptr;  // the region payload (or part of it) holding every offset below
  size_t memorySize = 0;
  size_t controlOffset = 0;
  size_t sketchOffset = 0;
  size_t aliveOffset = 0;  // member 0's alive flag (an f64 the region zeroes when the member goes)
  size_t aliveStride = 0;
  size_t lanesOffset = 0;
  size_t laneStride = 0;
  uint32_t member = 0;
  uint32_t laneCapacity = 1;
  uint8_t* front = nullptr;  // HeavyKeeperFront::Size(k, depth) bytes shared with JavaScript, or none
};

struct ListedKey {
  std::string key;
  uint64_t count;
  bool binary;
  bool truncated;  // published by another member, too long to publish whole: `key` is its first bytes
};

class HeavyKeeper {
 public:
  static constexpr int kInTopK = 1;
  static constexpr int kExpelledWaiting = 2;

  static Status Create(const HeavyKeeperConfig& config, std::unique_ptr<HeavyKeeper>* out);

  // Adds `incr` occurrences of a key. Returns kInTopK if the key is in this member's heap afterwards, plus
  // kExpelledWaiting when expelled keys wait in TakeExpelled().
  int Add(const uint8_t* key, size_t length, uint32_t incr, bool binary);
  // The sketch's estimate for a key, at least its heap count.
  uint64_t Count(const uint8_t* key, size_t length);
  // Halves every count of the sketch (host-wide when shared), this heap and the totals.
  void Fading();
  // Fading() unless a member already faded for this epoch (or a later one): one fading per period per host.
  bool FadeOnce(int64_t epoch);
  // The top k over the first `lanes` members' heaps (this member's only when local).
  std::vector<ListedKey> List(uint32_t lanes);
  uint64_t Total(uint32_t lanes);
  // Compare-and-swap loops on the shared sketch this member gave up after kCasTries lost races (raw_atomic.h):
  // adds a bucket did not count, buckets a fading left unhalved, fading claims left to another member.
  uint64_t contentionTimeouts() const { return contentionTimeouts_; }
  // When off (the default), expelled keys are not recorded: nobody listens.
  void CollectExpelled(bool on);
  std::vector<ExpelledKey> TakeExpelled();

 private:
  HeavyKeeper(const HeavyKeeperConfig& config);
  uint32_t UpdateRow(uint64_t* bucket, uint32_t fingerprint, uint32_t incr);
  // The reference's bucket, hash % width, without the division (4 per add otherwise).
  uint64_t* Bucket(uint32_t row, uint32_t hash) const {
    return sketch_ + size_t(row) * config_.width + FastMod(hash, widthInverse_, config_.width);
  }
  void CatchUp();
  void ApplyFront();
  // Tells the front the heap's minimum count when full (else -1), after anything that may have changed it.
  void PublishThreshold();
  void Expel(ExpelledKey&& key);
  int Pending() const { return expelled_.empty() ? 0 : kExpelledWaiting; }
  uint32_t Generation() const;

  HeavyKeeperConfig config_;
  double lookup_[kDecayTableSize];
  uint64_t widthInverse_;  // ModInverse(width)
  RandomSource rng_;
  uint64_t* sketch_;
  uint8_t* control_;
  HeavyKeeperLanes lanes_;
  HeavyKeeperFront front_;
  TopKHeap heap_;
  uint32_t seen_ = 0;
  uint64_t contentionTimeouts_ = 0;
  bool collect_ = false;
  std::vector<ExpelledKey> expelled_;
};

}  // namespace bulwark

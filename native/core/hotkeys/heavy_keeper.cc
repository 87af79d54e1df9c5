#include "core/hotkeys/heavy_keeper.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/hotkeys/heavy_keeper_layout.h"
#include "core/hotkeys/key_identity.h"
#include "core/util/murmur3.h"
#include "core/util/raw_atomic.h"

namespace bulwark {

namespace hl = heavy_keeper_layout;

namespace {

constexpr uint32_t kMaxK = 1u << 24;
constexpr uint32_t kMaxWidth = 1u << 28;
constexpr uint32_t kMaxDepth = 64;

inline uint64_t Pack(uint32_t fingerprint, uint32_t count) { return (uint64_t(fingerprint) << 32) | count; }
inline uint32_t SaturatingAdd(uint32_t a, uint32_t b) { return a > UINT32_MAX - b ? UINT32_MAX : a + b; }

// [offset, offset + bytes) lies in [0, size) and offset is 8-byte aligned.
bool Fits(size_t offset, uint64_t bytes, size_t size) {
  return offset % 8 == 0 && offset <= size && bytes <= size - offset;
}

Status Invalid(const char* message) { return Status::Error(StatusCode::kInvalidArgument, message); }

}  // namespace

Status HeavyKeeper::Create(const HeavyKeeperConfig& c, std::unique_ptr<HeavyKeeper>* out) {
  if (c.k < 1 || c.k > kMaxK) return Invalid("k must be an integer in [1, 2^24]");
  if (c.width < 1 || c.width > kMaxWidth) return Invalid("width must be an integer in [1, 2^28]");
  if (c.depth < 1 || c.depth > kMaxDepth) return Invalid("depth must be an integer in [1, 64]");
  if (!(c.decay > 0 && c.decay < 1)) return Invalid("decay must be in (0, 1)");
  if (c.memory == nullptr || reinterpret_cast<uintptr_t>(c.memory) % 8 != 0)
    return Invalid("the memory view must be 8-byte aligned");
  if (c.laneCapacity < 1 || c.member >= c.laneCapacity) return Invalid("member must be below laneCapacity");
  if (reinterpret_cast<uintptr_t>(c.front) % 8 != 0) return Invalid("the front must be 8-byte aligned");
  uint64_t sketchBytes = uint64_t(c.width) * c.depth * hl::kBucketSize;
  uint64_t laneBytes = hl::LaneSize(c.shared ? c.k : 0);
  if (!Fits(c.controlOffset, hl::kControlSize, c.memorySize)) return Invalid("control block outside the memory");
  if (!Fits(c.sketchOffset, sketchBytes, c.memorySize)) return Invalid("sketch outside the memory");
  if (c.aliveStride < 8 || c.aliveStride % 8 != 0 ||
      !Fits(c.aliveOffset, uint64_t(c.laneCapacity - 1) * c.aliveStride + 8, c.memorySize))
    return Invalid("alive flags outside the memory");
  if (c.laneStride < laneBytes || c.laneStride % 8 != 0 ||
      !Fits(c.lanesOffset, uint64_t(c.laneCapacity) * c.laneStride, c.memorySize))
    return Invalid("lanes outside the memory");
  out->reset(new HeavyKeeper(c));
  return Status::Ok();
}

HeavyKeeper::HeavyKeeper(const HeavyKeeperConfig& c)
    : config_(c),
      rng_(c.seed + uint64_t(c.member) * 0x9e3779b97f4a7c15ull),
      sketch_(reinterpret_cast<uint64_t*>(c.memory + c.sketchOffset)),
      control_(c.memory + c.controlOffset),
      lanes_(c.memory + c.lanesOffset, c.laneStride, c.memory + c.aliveOffset, c.aliveStride, c.member,
             c.shared ? c.k : 0),
      front_(c.front, c.k, c.depth),
      heap_(c.k) {
  widthInverse_ = ModInverse(c.width);
  for (int i = 0; i < kDecayTableSize; i++) lookup_[i] = std::pow(c.decay, i);
  front_.SetDecay(lookup_);
  front_.LeaveRandom(rng_);
  seen_ = Generation();
  lanes_.Claim(seen_);
  front_.SetSeen(seen_);
}

uint32_t HeavyKeeper::Generation() const {
  return __atomic_load_n(reinterpret_cast<const uint32_t*>(control_ + hl::kGenerationOffset), __ATOMIC_ACQUIRE);
}

// One row: returns the count this key holds in the bucket afterwards (0 when another key keeps it). In a shared
// sketch, a bucket another writer changes between every load and swap for kCasTries tries in a row (a member gone
// wrong) is left to it and the row answers 0: this add is not counted there, as if the key had lost the bucket.
uint32_t HeavyKeeper::UpdateRow(uint64_t* bucket, uint32_t fingerprint, uint32_t incr) {
  uint32_t mine = 0;
  auto step = [&](uint64_t old, uint64_t* next) {
    const uint32_t owner = static_cast<uint32_t>(old >> 32);
    const uint32_t count = static_cast<uint32_t>(old);
    mine = 0;
    *next = old;
    if (count == 0) {
      mine = incr;
      *next = incr ? Pack(fingerprint, incr) : old;
    } else if (owner == fingerprint) {
      mine = SaturatingAdd(count, incr);
      *next = Pack(owner, mine);
    } else if (incr > 0) {
      DecayOutcome d = Decay(count, incr, lookup_, rng_);
      mine = d.taken ? d.count : 0;
      *next = Pack(d.taken ? fingerprint : owner, d.count);
    }
    return *next != old;
  };
  if (!config_.shared) {
    uint64_t next = 0;
    if (step(__atomic_load_n(bucket, __ATOMIC_RELAXED), &next)) __atomic_store_n(bucket, next, __ATOMIC_RELAXED);
    return mine;
  }
  // Another member changed the bucket: redo the update on what it holds now.
  if (CasUpdate(bucket, step)) return mine;
  contentionTimeouts_++;
  return 0;
}

int HeavyKeeper::Add(const uint8_t* key, size_t length, uint32_t incr, bool binary) {
  CatchUp();
  uint32_t hashes[kMaxDepth];
  Murmur3X86_32Seeds(key, length, config_.depth, hashes);
  const uint32_t fingerprint = hashes[0];  // row 0's seed is the fingerprint's
  uint32_t maxCount = 0;
  uint32_t buckets[kMaxDepth];  // bucket indexes, for the front
  front_.TakeRandom(&rng_);     // the front may have drawn since native code last did
  for (uint32_t row = 0; row < config_.depth; row++) {
    uint64_t* bucket = Bucket(row, hashes[row]);
    buckets[row] = static_cast<uint32_t>(bucket - sketch_);
    maxCount = std::max(maxCount, UpdateRow(bucket, fingerprint, incr));
  }
  front_.LeaveRandom(rng_);
  lanes_.AddTotal(incr);

  const BoundedKey kept(key, length);  // a long key is kept (and looked up) as its bounded identity
  int32_t slot = heap_.Find(kept.data(), kept.length(), fingerprint);
  if (slot >= 0) {
    // Ours: a key already in the heap stays there and its count never goes down (the reference overwrites it
    // with the sketch's count, which collisions may have lowered, and reports it absent when that is below the
    // heap's minimum).
    if (heap_.Raise(slot, maxCount)) {
      if (config_.shared) lanes_.PublishCount(slot, maxCount);
      PublishThreshold();
    }
    front_.Report(slot, fingerprint, maxCount, buckets);
    return kInTopK | Pending();
  }
  // Ours: a zero count never enters, and an equal count does not displace the minimum (the reference reports
  // such a key as in the top-k without inserting it).
  if (maxCount == 0 || maxCount < config_.minCount || (heap_.full() && maxCount <= heap_.min().count)) {
    front_.Report(-1, fingerprint, maxCount, buckets);
    return Pending();
  }
  ExpelledKey expelled;
  bool didExpel = false;
  slot =
      heap_.Insert(kept.data(), kept.length(), fingerprint, maxCount, binary, kept.truncated(), &expelled, &didExpel);
  if (didExpel) Expel(std::move(expelled));
  front_.Moved(slot);
  front_.Report(slot, fingerprint, maxCount, buckets);
  PublishThreshold();
  if (config_.shared) {
    lanes_.PublishKey(slot, heap_.entry(slot));
    lanes_.PublishSlotsUsed(heap_.slotHighWater());
  }
  return kInTopK | Pending();
}

uint64_t HeavyKeeper::Count(const uint8_t* key, size_t length) {
  CatchUp();
  uint32_t hashes[kMaxDepth];
  Murmur3X86_32Seeds(key, length, config_.depth, hashes);
  const uint32_t fingerprint = hashes[0];
  uint64_t best = 0;
  for (uint32_t row = 0; row < config_.depth; row++) {
    uint64_t word = __atomic_load_n(Bucket(row, hashes[row]), __ATOMIC_RELAXED);
    if (static_cast<uint32_t>(word >> 32) == fingerprint) best = std::max<uint64_t>(best, static_cast<uint32_t>(word));
  }
  const BoundedKey kept(key, length);
  int32_t slot = heap_.Find(kept.data(), kept.length(), fingerprint);
  if (slot >= 0) best = std::max(best, heap_.entry(slot).count);
  return best;
}

// A shared bucket another writer keeps changing for kCasTries tries in a row is left unhalved: it is being
// rewritten anyway, and the next fading halves it.
void HeavyKeeper::Fading() {
  const size_t buckets = size_t(config_.width) * config_.depth;
  auto halve = [](uint64_t old, uint64_t* next) {
    *next = (old & 0xffffffff00000000ull) | (static_cast<uint32_t>(old) >> 1);
    return *next != old;
  };
  for (size_t i = 0; i < buckets; i++) {
    uint64_t next = 0;
    if (!config_.shared) {
      if (halve(__atomic_load_n(sketch_ + i, __ATOMIC_RELAXED), &next))
        __atomic_store_n(sketch_ + i, next, __ATOMIC_RELAXED);
      continue;
    }
    if (!CasUpdate(sketch_ + i, halve)) contentionTimeouts_++;
  }
  __atomic_add_fetch(reinterpret_cast<uint32_t*>(control_ + hl::kGenerationOffset), 1u, __ATOMIC_ACQ_REL);
  CatchUp();
}

// The claim moves only forward, so a writer that keeps moving it is another member fading: after kCasTries lost
// races this member lets it (false: it did not fade).
bool HeavyKeeper::FadeOnce(int64_t epoch) {
  int64_t* claimed = reinterpret_cast<int64_t*>(control_ + hl::kFadeEpochOffset);
  bool mine = false;
  const bool settled = CasUpdate(claimed, [&](int64_t current, int64_t* next) {
    *next = epoch + 1;
    mine = current < epoch + 1;
    return mine;
  });
  if (!settled) contentionTimeouts_++;
  if (!settled || !mine) return false;
  Fading();
  return true;
}

// Applies the fadings this member has not seen yet to its heap and total. Ours: keys halved to 0 leave the heap
// (expelled, never listed with count 0) and the heap order is restored (halving can make counts equal).
void HeavyKeeper::CatchUp() {
  ApplyFront();  // before any halving: what the front added happened before it
  const uint32_t generation = Generation();
  if (generation == seen_) return;
  const uint32_t shift = generation - seen_;
  seen_ = generation;
  std::vector<ExpelledKey> removed;
  std::vector<int32_t> freed;
  heap_.Halve(shift, &removed, &freed);
  PublishThreshold();  // halving lowers the minimum, and may leave the heap not full
  for (int32_t slot : freed) front_.Moved(slot);
  front_.SetSeen(generation);
  lanes_.CatchUpTotal(generation);
  if (config_.shared) {
    for (int32_t slot : freed) lanes_.PublishEmpty(slot);
    for (int32_t slot : heap_.Sorted()) lanes_.PublishCount(slot, heap_.entry(slot).count);
  }
  for (ExpelledKey& key : removed) Expel(std::move(key));
}

void HeavyKeeper::PublishThreshold() {
  if (front_.attached()) front_.SetThreshold(heap_.full() ? static_cast<double>(heap_.min().count) : -1.0);
}

// The heap counts and the total the JavaScript front raised since native code last ran.
void HeavyKeeper::ApplyFront() {
  bool raised = false;
  const uint64_t total = front_.Apply([&](int32_t slot, uint32_t count) {
    if (static_cast<uint32_t>(slot) >= heap_.slotHighWater() || heap_.entry(slot).heapPos < 0) return;
    if (!heap_.Raise(slot, count)) return;
    raised = true;
    if (config_.shared) lanes_.PublishCount(slot, count);
  });
  if (raised) PublishThreshold();
  if (total > 0) lanes_.AddTotal(total);
}

void HeavyKeeper::Expel(ExpelledKey&& key) {
  if (!collect_) return;
  if (key.truncated) key.key = ShownPrefix(key.key, key.binary);
  expelled_.push_back(std::move(key));
}

std::vector<ListedKey> HeavyKeeper::List(uint32_t lanes) {
  CatchUp();
  std::vector<ListedKey> items;
  const std::vector<int32_t> sorted = heap_.Sorted();
  for (int32_t slot : sorted) {
    const TopKEntry& e = heap_.entry(slot);
    items.push_back(ListedKey{e.truncated ? ShownPrefix(e.key, e.binary) : e.key, e.count, e.binary, e.truncated});
  }
  if (!config_.shared) return items;

  // Merge the other members' published heaps: one entry per key, with the highest count any member saw.
  std::unordered_map<std::string, size_t> byIdentity;
  for (size_t i = 0; i < sorted.size(); i++) byIdentity.emplace(heap_.entry(sorted[i]).key, i);
  std::vector<PublishedKey> published;
  lanes_.ReadOthers(std::min(lanes, config_.laneCapacity), Generation(), &published);
  for (PublishedKey& p : published) {
    auto found = byIdentity.find(p.identity);
    if (found != byIdentity.end()) {
      items[found->second].count = std::max(items[found->second].count, p.count);
      continue;
    }
    byIdentity.emplace(p.identity, items.size());
    items.push_back(ListedKey{std::move(p.shown), p.count, p.binary, p.truncated});
  }
  std::sort(items.begin(), items.end(), [](const ListedKey& a, const ListedKey& b) {
    if (a.count != b.count) return a.count > b.count;
    return CompareKeys(a.key, b.key) < 0;
  });
  if (items.size() > config_.k) items.resize(config_.k);
  return items;
}

uint64_t HeavyKeeper::Total(uint32_t lanes) {
  CatchUp();
  return lanes_.Total(std::min(lanes, config_.laneCapacity), Generation());
}

void HeavyKeeper::CollectExpelled(bool on) {
  collect_ = on;
  if (!on) expelled_.clear();
}

std::vector<ExpelledKey> HeavyKeeper::TakeExpelled() {
  std::vector<ExpelledKey> out;
  out.swap(expelled_);
  return out;
}

}  // namespace bulwark

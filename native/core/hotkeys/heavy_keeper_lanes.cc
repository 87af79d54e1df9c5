#include "core/hotkeys/heavy_keeper_lanes.h"

#include <cstring>

#include "core/hotkeys/heavy_keeper_layout.h"
#include "core/hotkeys/key_identity.h"

namespace bulwark {

namespace hl = heavy_keeper_layout;

namespace {

// A reader gives up on a slot that keeps changing under it after this many tries (the owner rewrites a slot in
// well under a microsecond, so this only happens to a member that died mid-write; its slot is then skipped).
constexpr int kReadAttempts = 64;

template <typename T>
T Load(const uint8_t* p) {
  return __atomic_load_n(reinterpret_cast<const T*>(p), __ATOMIC_ACQUIRE);
}
template <typename T>
void Store(uint8_t* p, T v) {
  __atomic_store_n(reinterpret_cast<T*>(p), v, __ATOMIC_RELEASE);
}

inline uint64_t Shifted(uint64_t v, uint32_t shift) { return shift >= 64 ? 0 : v >> shift; }

// Seqlock writer side: odd while writing.
inline uint32_t BeginWrite(uint8_t* seq) {
  uint32_t s = Load<uint32_t>(seq) + 1;
  Store<uint32_t>(seq, s);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  return s;
}
inline void EndWrite(uint8_t* seq, uint32_t s) { Store<uint32_t>(seq, s + 1); }

}  // namespace

HeavyKeeperLanes::HeavyKeeperLanes(uint8_t* lanes, size_t laneStride, uint8_t* alive, size_t aliveStride,
                                   uint32_t member, uint32_t publishedSlots)
    : lanes_(lanes),
      laneStride_(laneStride),
      alive_(alive),
      aliveStride_(aliveStride),
      member_(member),
      publishedSlots_(publishedSlots) {}

uint8_t* HeavyKeeperLanes::Slot(uint32_t member, int32_t slot) const {
  return Lane(member) + hl::kLaneHeaderSize + size_t(slot) * hl::kSlotSize;
}

void HeavyKeeperLanes::Claim(uint32_t generation) {
  CatchUpTotal(generation);
  for (uint32_t s = 0; s < publishedSlots_; s++) PublishEmpty(static_cast<int32_t>(s));
  PublishSlotsUsed(0);
  const double one = 1;
  uint64_t bits;
  std::memcpy(&bits, &one, sizeof bits);
  Store<uint64_t>(alive_ + size_t(member_) * aliveStride_, bits);
}

void HeavyKeeperLanes::AddTotal(uint64_t incr) {
  uint8_t* cell = Lane(member_) + hl::kLaneTotalOffset;
  __atomic_store_n(reinterpret_cast<uint64_t*>(cell), Load<uint64_t>(cell) + incr, __ATOMIC_RELAXED);
}

void HeavyKeeperLanes::CatchUpTotal(uint32_t generation) {
  uint8_t* lane = Lane(member_);
  uint32_t seen = Load<uint32_t>(lane + hl::kLaneSeenOffset);
  if (seen == generation) return;
  uint32_t s = BeginWrite(lane + hl::kLaneSeqOffset);
  Store<uint64_t>(lane + hl::kLaneTotalOffset, Shifted(Load<uint64_t>(lane + hl::kLaneTotalOffset), generation - seen));
  Store<uint32_t>(lane + hl::kLaneSeenOffset, generation);
  EndWrite(lane + hl::kLaneSeqOffset, s);
}

uint64_t HeavyKeeperLanes::Total(uint32_t lanes, uint32_t generation) const {
  uint64_t sum = 0;
  for (uint32_t m = 0; m < lanes; m++) {
    const uint8_t* lane = Lane(m);
    uint64_t total = 0;
    uint32_t seen = generation;
    for (int attempt = 0; attempt < kReadAttempts; attempt++) {
      uint32_t before = Load<uint32_t>(lane + hl::kLaneSeqOffset);
      seen = Load<uint32_t>(lane + hl::kLaneSeenOffset);
      total = Load<uint64_t>(lane + hl::kLaneTotalOffset);
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      if ((before & 1) == 0 && Load<uint32_t>(lane + hl::kLaneSeqOffset) == before) break;
    }
    sum += Shifted(total, generation - seen);
  }
  return sum;
}

void HeavyKeeperLanes::PublishKey(int32_t slot, const TopKEntry& entry) {
  uint8_t* p = Slot(member_, slot);
  // The heap already holds a long key as its identity: publish that, under the whole key's length.
  const std::string& id = entry.key;
  uint32_t flags = (entry.binary ? hl::kFlagBinary : 0) | (entry.truncated ? hl::kFlagTruncated : 0);
  const uint32_t length = entry.truncated ? IdentityLength(id) : static_cast<uint32_t>(id.size());
  uint32_t s = BeginWrite(p + hl::kSlotSeqOffset);
  Store<uint32_t>(p + hl::kSlotLengthOffset, length);
  Store<uint32_t>(p + hl::kSlotFlagsOffset, flags);
  Store<uint64_t>(p + hl::kSlotCountOffset, entry.count);
  std::memcpy(p + hl::kSlotKeyOffset, id.data(), id.size() > hl::kInlineKey ? hl::kInlineKey : id.size());
  EndWrite(p + hl::kSlotSeqOffset, s);
}

void HeavyKeeperLanes::PublishCount(int32_t slot, uint64_t count) {
  Store<uint64_t>(Slot(member_, slot) + hl::kSlotCountOffset, count);
}

void HeavyKeeperLanes::PublishEmpty(int32_t slot) {
  uint8_t* p = Slot(member_, slot);
  uint32_t s = BeginWrite(p + hl::kSlotSeqOffset);
  Store<uint64_t>(p + hl::kSlotCountOffset, 0);
  Store<uint32_t>(p + hl::kSlotLengthOffset, 0);
  EndWrite(p + hl::kSlotSeqOffset, s);
}

void HeavyKeeperLanes::PublishSlotsUsed(uint32_t slots) {
  Store<uint32_t>(Lane(member_) + hl::kLaneSlotsOffset, slots);
}

bool HeavyKeeperLanes::ReadSlot(const uint8_t* p, uint32_t shift, PublishedKey* out) const {
  uint8_t key[hl::kInlineKey];
  for (int attempt = 0; attempt < kReadAttempts; attempt++) {
    uint32_t before = Load<uint32_t>(p + hl::kSlotSeqOffset);
    if (before & 1) continue;
    uint32_t length = Load<uint32_t>(p + hl::kSlotLengthOffset);
    uint32_t flags = Load<uint32_t>(p + hl::kSlotFlagsOffset);
    uint64_t count = Load<uint64_t>(p + hl::kSlotCountOffset);
    bool truncated = (flags & hl::kFlagTruncated) != 0;
    size_t stored = truncated ? hl::kInlineKey : (length <= hl::kInlineKey ? length : hl::kInlineKey);
    std::memcpy(key, p + hl::kSlotKeyOffset, stored);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (Load<uint32_t>(p + hl::kSlotSeqOffset) != before) continue;
    count = Shifted(count, shift);
    if (count == 0) return false;
    const char* chars = reinterpret_cast<const char*>(key);
    out->count = count;
    out->binary = (flags & hl::kFlagBinary) != 0;
    out->truncated = truncated;
    out->shown.assign(chars, stored);
    if (truncated) out->shown = ShownPrefix(out->shown, out->binary);
    out->identity.assign(chars, stored);
    if (truncated) out->identity.append(reinterpret_cast<const char*>(&length), sizeof length);
    return true;
  }
  return false;
}

void HeavyKeeperLanes::ReadOthers(uint32_t lanes, uint32_t generation, std::vector<PublishedKey>* out) const {
  for (uint32_t m = 0; m < lanes; m++) {
    if (m == member_ || Load<uint64_t>(alive_ + size_t(m) * aliveStride_) == 0) continue;
    const uint8_t* lane = Lane(m);
    uint32_t shift = generation - Load<uint32_t>(lane + hl::kLaneSeenOffset);
    uint32_t used = Load<uint32_t>(lane + hl::kLaneSlotsOffset);
    if (used > publishedSlots_) used = publishedSlots_;
    PublishedKey key;
    for (uint32_t s = 0; s < used; s++) {
      if (ReadSlot(Slot(m, static_cast<int32_t>(s)), shift, &key)) out->push_back(key);
    }
  }
}

}  // namespace bulwark

// The per-member lanes of a HeavyKeeper region: each member's running total, and (when shared) the keys of its
// top-k heap published under their heap slot numbers, so that any member can list the host's top-k.
//
// Only the owner writes a lane. Counts are single 8-byte stores; a key rewrite and a total halving are guarded
// by a sequence number (odd while writing) that readers check before and after copying.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/hotkeys/top_k_heap.h"

namespace bulwark {

// A key as another member published it. `identity` is the published form (equal keys give equal identities).
struct PublishedKey {
  std::string identity;
  std::string shown;  // the whole key, or its first bytes when it was too long to publish whole
  uint64_t count;
  bool binary;
  bool truncated;
};

class HeavyKeeperLanes {
 public:
  HeavyKeeperLanes(uint8_t* lanes, size_t laneStride, uint8_t* alive, size_t aliveStride, uint32_t member,
                   uint32_t publishedSlots);

  // Takes over this member's lane: applies halvings it missed to the total it inherits, empties its slots and
  // marks it alive.
  void Claim(uint32_t generation);
  void AddTotal(uint64_t incr);
  // Applies the halvings up to `generation` to this member's total.
  void CatchUpTotal(uint32_t generation);
  // Sum over lanes [0, lanes), each halved up to `generation`.
  uint64_t Total(uint32_t lanes, uint32_t generation) const;

  void PublishKey(int32_t slot, const TopKEntry& entry);
  void PublishCount(int32_t slot, uint64_t count);
  void PublishEmpty(int32_t slot);
  void PublishSlotsUsed(uint32_t slots);
  // Keys published by the other live members, counts halved up to `generation`, zero counts left out.
  void ReadOthers(uint32_t lanes, uint32_t generation, std::vector<PublishedKey>* out) const;

 private:
  uint8_t* Lane(uint32_t member) const { return lanes_ + size_t(member) * laneStride_; }
  uint8_t* Slot(uint32_t member, int32_t slot) const;
  bool ReadSlot(const uint8_t* slot, uint32_t shift, PublishedKey* out) const;

  uint8_t* lanes_;
  size_t laneStride_;
  uint8_t* alive_;
  size_t aliveStride_;
  uint32_t member_;
  uint32_t publishedSlots_;
};

}  // namespace bulwark

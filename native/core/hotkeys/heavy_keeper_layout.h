// Byte layout of a HeavyKeeper in a region's payload. The TypeScript side reads these sizes from the addon
// (`native.heavyKeeperLayout`) to reserve space; the offsets inside are only used here.
//
//   control  one cache line: u32 fade generation at +0, i64 last claimed fade epoch + 1 at +8
//   sketch   depth x width u64 words: fingerprint << 32 | count (count 0 = empty bucket)
//   alive    one reclaimable f64 per member: 1 while its snapshot may be read (zeroed on detach or death)
//   lanes    one per member: a header, then (shared only) k published slots
//
// Lane header: u32 seq (odd while the owner rewrites total and seen), u32 generation seen, u64 total of the
// member's increments, u32 slots in use.
// Slot: u32 seq (odd while the key is rewritten), u32 key length, u64 count, u32 flags, then the key: whole up to
// kInlineKey bytes; a longer key (kept in the heap as its identity, key_identity.h) is published as its first
// kPrefixBytes and an 8-byte hash of the whole key, the slot's length being the whole key's.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bulwark {
namespace heavy_keeper_layout {

constexpr size_t kControlSize = 64;
constexpr size_t kGenerationOffset = 0;
constexpr size_t kFadeEpochOffset = 8;

constexpr size_t kBucketSize = 8;

constexpr size_t kLaneHeaderSize = 64;
constexpr size_t kLaneSeqOffset = 0;
constexpr size_t kLaneSeenOffset = 4;
constexpr size_t kLaneTotalOffset = 8;
constexpr size_t kLaneSlotsOffset = 16;

constexpr size_t kSlotSize = 128;
constexpr size_t kSlotSeqOffset = 0;
constexpr size_t kSlotLengthOffset = 4;
constexpr size_t kSlotCountOffset = 8;
constexpr size_t kSlotFlagsOffset = 16;
constexpr size_t kSlotKeyOffset = 24;
constexpr size_t kInlineKey = kSlotSize - kSlotKeyOffset;  // 104
constexpr size_t kPrefixBytes = kInlineKey - 8;            // 96

constexpr uint32_t kFlagBinary = 1;
constexpr uint32_t kFlagTruncated = 2;

inline size_t LaneSize(uint32_t publishedSlots) { return kLaneHeaderSize + size_t(publishedSlots) * kSlotSize; }

}  // namespace heavy_keeper_layout
}  // namespace bulwark

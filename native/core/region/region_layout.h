// Byte layout of a shared region. JavaScript reads these offsets from the addon (binding `layout`), so this file
// is the only place they are written down.
//
// A region is: a 512-byte header, a member table (one 64-byte slot per attachment: a thread or a process that
// opened the region), then the payload, which the component that owns the region lays out
// (lib/foundation/regions/region-layout.ts).
//
// Frozen across layout versions: the magic, the version, the size, the member capacity and the member slot format
// (offsets marked FROZEN). Another version of bulwark can then always tell whether the processes that use a region
// are still alive, and rebuild a region that only dead processes used instead of refusing it forever.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bulwark {
namespace layout {

constexpr uint32_t kMagic = 0x4B525742;  // "BWRK" read as little-endian bytes
// 2: member leases (kMemberLeaseOffset), and the user's uid in every region's name.
constexpr uint32_t kVersion = 2;

// Header fields (byte offsets).
constexpr size_t kMagicOffset = 0;             // u32 FROZEN
constexpr size_t kVersionOffset = 4;           // u32 FROZEN
constexpr size_t kTotalSizeOffset = 8;         // f64 FROZEN: whole region in bytes
constexpr size_t kStateOffset = 16;            // i32: kStateReady once the payload is initialised
constexpr size_t kGenerationOffset = 20;       // i32: +1 each time the region is rebuilt
constexpr size_t kMemberCapacityOffset = 24;   // i32 FROZEN
constexpr size_t kMemberHighWaterOffset = 28;  // i32: highest member slot ever used + 1 (lanes to read)
constexpr size_t kPayloadOffsetOffset = 32;    // i32
constexpr size_t kReclaimCountOffset = 36;     // i32
constexpr size_t kCreatedAtOffset = 40;        // f64: monotonic ms when the payload was (re)initialised
constexpr size_t kAttachCountOffset = 48;      // i32: attachments since creation (diagnostics)
constexpr size_t kKindOffset = 64;             // char[32], NUL padded
constexpr size_t kKindSize = 32;
constexpr size_t kFingerprintOffset = 96;  // char[160], NUL padded: the owner's layout-relevant configuration
constexpr size_t kFingerprintSize = 160;
constexpr size_t kReclaimOffset = 256;  // kMaxReclaim x { u32 payload offset, u32 stride }
constexpr size_t kMaxReclaim = 16;
constexpr size_t kHeaderSize = 512;

constexpr int32_t kStateEmpty = 0;
constexpr int32_t kStateReady = 2;

// Member slots, starting at kHeaderSize (FROZEN).
constexpr size_t kMemberSlotSize = 64;
constexpr size_t kMemberPidOffset = 0;          // i32: 0 when free
constexpr size_t kMemberSerialOffset = 4;       // u32: per-process attachment serial
constexpr size_t kMemberStartTimeOffset = 8;    // u64: process start time (platform/process.h), 0 when unknown
constexpr size_t kMemberPidNsOffset = 16;       // u64: inode of the pid namespace, 0 when unknown
constexpr size_t kMemberAttachedAtOffset = 24;  // f64: monotonic ms
constexpr size_t kMemberThreadOffset = 32;      // i32: worker thread id (0 = main thread)
// f64: monotonic ms at which the member's process last renewed its lease (the sampler renews every open attachment
// every kLeaseRenewMs). How a member in another pid namespace, whose pid means nothing here, is known to be alive.
constexpr size_t kMemberLeaseOffset = 40;

// Leases: renewed every kLeaseRenewMs, expired after kLeaseTtlMs without renewal. The sampler reclaims a dead member
// within kLeaseRenewMs when its pid is gone from this pid namespace, else (another namespace, a zombie, a reused pid)
// within kLeaseTtlMs + kLeaseRenewMs (800 ms); a live member in another namespace must miss three renewals in a row
// before it can be judged dead, and one in this namespace never is while its process runs.
constexpr double kLeaseRenewMs = 200;
constexpr double kLeaseTtlMs = 600;

constexpr uint32_t kMaxMemberCapacity = 4096;
constexpr size_t kMaxRegionSize = size_t(1) << 32;

inline size_t AlignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }
inline size_t MemberSlot(uint32_t index) { return kHeaderSize + size_t(index) * kMemberSlotSize; }
inline size_t PayloadOffset(uint32_t capacity) { return AlignUp(MemberSlot(capacity), 64); }

}  // namespace layout
}  // namespace bulwark

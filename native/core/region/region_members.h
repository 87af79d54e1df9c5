// Member slots of a shared region: who this process is, whether a slot's member is still alive, and claiming,
// renewing, freeing and reaping slots. Internal to the region code (shared_region.cc and its helpers).
//
// Liveness (docs/readme/foundation.md, "Lifetime"):
// - A member in this pid namespace (or where there are none: macOS, Windows) is judged by its process: dead when the
//   process is gone or its pid now belongs to another process; for this process's own members, when no open
//   attachment holds its serial. Never dead while its process runs, however late its lease.
// - A member in another pid namespace (containers of one pod sharing /dev/shm) cannot be judged by its pid: it is
//   dead when its lease has not been renewed for kLeaseTtlMs on the host's monotonic clock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/platform/process.h"

namespace bulwark {
namespace region_detail {

struct SelfIdentity {
  ProcessId pid;
  uint64_t startTime;
  uint64_t pidNs;
};
const SelfIdentity& Self();

// True when the slot's member certainly is gone (see above); a free slot is not dead. Caller holds the registry
// mutex.
bool MemberIsDead(const uint8_t* base, uint32_t slot, const std::string& name, double nowMs);

// True when the slot is taken and its lease is older than kLeaseTtlMs (or not a time at all).
bool LeaseExpired(const uint8_t* base, uint32_t slot, double nowMs);

// What the sampler checks every tick, cheaply: a member worth judging in full (MemberIsDead, under the region's
// lock) because its lease expired or, in this pid namespace, no process has its pid any more.
bool MemberNeedsJudging(const uint8_t* base, uint32_t slot, double nowMs);

// Renews this process's lease on `slot`; false when the slot no longer holds this attachment (it was reaped).
bool RenewLease(uint8_t* base, uint32_t slot, uint32_t serial, double nowMs);

// Zeroes the slot's cells of every reclaimable lane set, never writing outside the `mapped` bytes.
void ZeroReclaimCells(uint8_t* base, size_t mapped, uint32_t slot);
void FreeSlot(uint8_t* base, uint32_t slot);

// Reaps dead members; returns the number of live members left. Caller holds the region lock and the registry mutex.
int ReapLocked(uint8_t* base, size_t mapped, const std::string& name, int* reaped);

// Claims the first free slot for this process; false when every slot is taken. Caller holds the region lock.
bool ClaimSlot(uint8_t* base, uint32_t capacity, int32_t threadId, uint32_t serial, uint32_t* slotOut);
// Claims `slot` again for an attachment whose slot was reaped, if it is free; caller holds the region lock.
bool ReclaimSlot(uint8_t* base, uint32_t slot, int32_t threadId, uint32_t serial);

}  // namespace region_detail
}  // namespace bulwark

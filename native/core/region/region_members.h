// Member slots of a shared region: who this process is, whether a slot's member is still alive, and claiming,
// freeing and reaping slots. Internal to the region code (shared_region.cc and its helpers).
#pragma once
#include <sys/types.h>
#include <cstddef>
#include <cstdint>
#include <string>

namespace bulwark {
namespace region_detail {

struct SelfIdentity {
  pid_t pid;
  uint64_t startTime;
  uint64_t pidNs;
};
const SelfIdentity& Self();

// True when the slot's member certainly is gone: its process is dead or its pid was reused, or (this process)
// no open attachment holds its serial. A free slot, or one from another pid namespace, is not dead.
// Caller holds the registry mutex.
bool MemberIsDead(const uint8_t* base, uint32_t slot, const std::string& name);

// Zeroes the slot's cells of every reclaimable lane set, never writing outside the `mapped` bytes.
void ZeroReclaimCells(uint8_t* base, size_t mapped, uint32_t slot);
void FreeSlot(uint8_t* base, uint32_t slot);

// Reaps dead members; returns the number of live members left. Caller holds the flock and the registry mutex.
int ReapLocked(uint8_t* base, size_t mapped, const std::string& name, int* reaped);

// Claims the first free slot for this process; false when every slot is taken. Caller holds the flock.
bool ClaimSlot(uint8_t* base, uint32_t capacity, int32_t threadId, uint32_t serial, uint32_t* slotOut);

}  // namespace region_detail
}  // namespace bulwark

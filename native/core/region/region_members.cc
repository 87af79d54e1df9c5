#include "core/region/region_members.h"

#include <unistd.h>
#include <cstring>

#include "core/platform/clock.h"
#include "core/platform/process_identity.h"
#include "core/region/region_header.h"
#include "core/region/region_layout.h"
#include "core/region/region_mappings.h"
#include "core/util/raw_atomic.h"

namespace bulwark {
namespace region_detail {

using namespace layout;

const SelfIdentity& Self() {
  // Recomputed after fork(): a child must not look like its parent.
  static SelfIdentity self{0, 0, 0};
  pid_t pid = getpid();
  if (self.pid != pid) self = SelfIdentity{pid, ProcessStartTime(pid), PidNamespaceId()};
  return self;
}

bool MemberIsDead(const uint8_t* base, uint32_t slot, const std::string& name) {
  size_t s = MemberSlot(slot);
  int32_t pid = LoadI32(base + s + kMemberPidOffset);
  if (pid == 0) return false;  // free, not dead
  uint32_t serial = Read<uint32_t>(base, s + kMemberSerialOffset);
  uint64_t start = Read<uint64_t>(base, s + kMemberStartTimeOffset);
  uint64_t ns = Read<uint64_t>(base, s + kMemberPidNsOffset);
  const SelfIdentity& self = Self();
  if (ns != 0 && self.pidNs != 0 && ns != self.pidNs) return false;  // another pid namespace: cannot judge
  if (pid == self.pid) {
    if (start != 0 && self.startTime != 0 && start != self.startTime) return true;  // an earlier process, same pid
    return !SerialIsOpen(serial, name);
  }
  return ProcessLiveness(pid, start) == Liveness::kDead;
}

void ZeroReclaimCells(uint8_t* base, size_t mapped, uint32_t slot) {
  uint32_t payload = Read<uint32_t>(base, kPayloadOffsetOffset);
  int32_t count = Read<int32_t>(base, kReclaimCountOffset);
  if (count < 0 || count > static_cast<int32_t>(kMaxReclaim)) return;
  for (int32_t i = 0; i < count; i++) {
    uint32_t off = Read<uint32_t>(base, kReclaimOffset + i * 8);
    uint32_t stride = Read<uint32_t>(base, kReclaimOffset + i * 8 + 4);
    size_t cell = size_t(payload) + off + size_t(stride) * slot;
    if (cell % 8 != 0 || cell + 8 > mapped) continue;  // never write outside the mapping
    StoreF64(base + cell, 0.0);
  }
}

void FreeSlot(uint8_t* base, uint32_t slot) {
  size_t s = MemberSlot(slot);
  std::memset(base + s + 4, 0, kMemberSlotSize - 4);
  StoreI32(base + s + kMemberPidOffset, 0);
}

int ReapLocked(uint8_t* base, size_t mapped, const std::string& name, int* reaped) {
  uint32_t capacity = Read<uint32_t>(base, kMemberCapacityOffset);
  int live = 0;
  // The capacity is re-read from shared memory, which a faulty writer may have overwritten since attach: never
  // walk past the mapping.
  for (uint32_t i = 0; i < capacity && MemberSlot(i) + kMemberSlotSize <= mapped; i++) {
    if (LoadI32(base + MemberSlot(i) + kMemberPidOffset) == 0) continue;
    if (MemberIsDead(base, i, name)) {
      ZeroReclaimCells(base, mapped, i);
      FreeSlot(base, i);
      if (reaped) (*reaped)++;
    } else {
      live++;
    }
  }
  return live;
}

bool ClaimSlot(uint8_t* base, uint32_t capacity, int32_t threadId, uint32_t serial, uint32_t* slotOut) {
  const SelfIdentity& self = Self();
  for (uint32_t i = 0; i < capacity; i++) {
    size_t s = MemberSlot(i);
    if (LoadI32(base + s + kMemberPidOffset) != 0) continue;
    Write<uint32_t>(base, s + kMemberSerialOffset, serial);
    Write<uint64_t>(base, s + kMemberStartTimeOffset, self.startTime);
    Write<uint64_t>(base, s + kMemberPidNsOffset, self.pidNs);
    Write<double>(base, s + kMemberAttachedAtOffset, MonotonicMs());
    Write<int32_t>(base, s + kMemberThreadOffset, threadId);
    StoreI32(base + s + kMemberPidOffset, self.pid);
    int32_t hw = LoadI32(base + kMemberHighWaterOffset);
    if (static_cast<int32_t>(i) + 1 > hw) StoreI32(base + kMemberHighWaterOffset, static_cast<int32_t>(i) + 1);
    AddI32(base + kAttachCountOffset, 1);
    *slotOut = i;
    return true;
  }
  return false;
}

}  // namespace region_detail
}  // namespace bulwark

#include "core/region/region_members.h"

#include <cstring>

#include "core/platform/clock.h"
#include "core/region/region_header.h"
#include "core/region/region_layout.h"
#include "core/region/region_mappings.h"
#include "core/util/raw_atomic.h"

namespace bulwark {
namespace region_detail {

using namespace layout;

namespace {

// Writes this process's identity into a free slot and publishes it (the pid last).
void TakeSlot(uint8_t* base, uint32_t slot, int32_t threadId, uint32_t serial) {
  const SelfIdentity& self = Self();
  size_t s = MemberSlot(slot);
  double now = MonotonicMs();
  Write<uint32_t>(base, s + kMemberSerialOffset, serial);
  Write<uint64_t>(base, s + kMemberStartTimeOffset, self.startTime);
  Write<uint64_t>(base, s + kMemberPidNsOffset, self.pidNs);
  Write<double>(base, s + kMemberAttachedAtOffset, now);
  Write<int32_t>(base, s + kMemberThreadOffset, threadId);
  StoreF64(base + s + kMemberLeaseOffset, now);
  StoreI32(base + s + kMemberPidOffset, self.pid);
  int32_t hw = LoadI32(base + kMemberHighWaterOffset);
  if (static_cast<int32_t>(slot) + 1 > hw) StoreI32(base + kMemberHighWaterOffset, static_cast<int32_t>(slot) + 1);
  AddI32(base + kAttachCountOffset, 1);
}

// The member's pid means something here: same pid namespace, or namespaces unknown or absent (macOS, Windows).
bool SameNamespace(uint64_t memberNs) {
  uint64_t ours = Self().pidNs;
  return memberNs == 0 || ours == 0 || memberNs == ours;
}

bool IsOurs(const uint8_t* base, uint32_t slot, uint32_t serial) {
  size_t s = MemberSlot(slot);
  return LoadI32(base + s + kMemberPidOffset) == Self().pid && Read<uint32_t>(base, s + kMemberSerialOffset) == serial;
}

}  // namespace

const SelfIdentity& Self() {
  // Recomputed after fork(): a child must not look like its parent.
  static SelfIdentity self{0, 0, 0};
  ProcessId pid = CurrentProcessId();
  if (self.pid != pid) self = SelfIdentity{pid, ProcessStartTime(pid), PidNamespaceId()};
  return self;
}

bool LeaseExpired(const uint8_t* base, uint32_t slot, double nowMs) {
  size_t s = MemberSlot(slot);
  if (LoadI32(base + s + kMemberPidOffset) == 0) return false;
  double lease = LoadF64(base + s + kMemberLeaseOffset);
  // A lease far in the future is no time at all (a faulty writer): it cannot keep a member alive.
  bool valid = lease <= nowMs + kLeaseTtlMs && nowMs - lease < kLeaseTtlMs;
  return !valid;
}

bool MemberNeedsJudging(const uint8_t* base, uint32_t slot, double nowMs) {
  size_t s = MemberSlot(slot);
  ProcessId pid = LoadI32(base + s + kMemberPidOffset);
  if (pid == 0) return false;
  if (LeaseExpired(base, slot, nowMs)) return true;
  return pid != Self().pid && SameNamespace(Read<uint64_t>(base, s + kMemberPidNsOffset)) && ProcessGone(pid);
}

bool MemberIsDead(const uint8_t* base, uint32_t slot, const std::string& name, double nowMs) {
  size_t s = MemberSlot(slot);
  ProcessId pid = LoadI32(base + s + kMemberPidOffset);
  if (pid == 0) return false;  // free, not dead
  uint32_t serial = Read<uint32_t>(base, s + kMemberSerialOffset);
  uint64_t start = Read<uint64_t>(base, s + kMemberStartTimeOffset);
  uint64_t ns = Read<uint64_t>(base, s + kMemberPidNsOffset);
  const SelfIdentity& self = Self();
  if (!SameNamespace(ns)) return LeaseExpired(base, slot, nowMs);
  if (pid == self.pid) {
    if (start != 0 && self.startTime != 0 && start != self.startTime) return true;  // an earlier process, same pid
    return !SerialIsOpen(serial, name);
  }
  return ProcessLiveness(pid, start) == Liveness::kDead;
}

bool RenewLease(uint8_t* base, uint32_t slot, uint32_t serial, double nowMs) {
  if (!IsOurs(base, slot, serial)) return false;
  StoreF64(base + MemberSlot(slot) + kMemberLeaseOffset, nowMs);
  return true;
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
  double now = MonotonicMs();
  int live = 0;
  // The capacity is re-read from shared memory, which a faulty writer may have overwritten since attach: never
  // walk past the mapping.
  for (uint32_t i = 0; i < capacity && MemberSlot(i) + kMemberSlotSize <= mapped; i++) {
    if (LoadI32(base + MemberSlot(i) + kMemberPidOffset) == 0) continue;
    if (MemberIsDead(base, i, name, now)) {
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
  for (uint32_t i = 0; i < capacity; i++) {
    if (LoadI32(base + MemberSlot(i) + kMemberPidOffset) != 0) continue;
    TakeSlot(base, i, threadId, serial);
    *slotOut = i;
    return true;
  }
  return false;
}

bool ReclaimSlot(uint8_t* base, uint32_t slot, int32_t threadId, uint32_t serial) {
  if (LoadI32(base + MemberSlot(slot) + kMemberPidOffset) != 0) return false;
  TakeSlot(base, slot, threadId, serial);
  return true;
}

}  // namespace region_detail
}  // namespace bulwark

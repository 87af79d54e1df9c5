// RegionRegistry: attaching to and detaching from named regions, the sampler's lease renewal and reaping, and the
// references that keep mappings alive. The operations for tools that look at regions without joining them are in
// shared_region_tools.cc.
#include "core/region/shared_region.h"

#include <cstdio>
#include <mutex>

#include "core/platform/clock.h"
#include "core/platform/process.h"
#include "core/region/region_header.h"
#include "core/region/region_layout.h"
#include "core/region/region_mappings.h"
#include "core/region/region_members.h"
#include "core/util/raw_atomic.h"

namespace bulwark {

using namespace layout;
using namespace region_detail;

namespace {

uint32_t g_nextSerial = 1;

// Gives back the member's slot and lanes; the last live member removes the name. Caller holds the registry mutex.
void DetachLocked(Mapping& m) {
  if (!m.attached) return;
  m.attached = false;
  bool locked = m.store.Lock(2000);
  if (RenewLease(m.base, m.member, m.serial, MonotonicMs())) {  // still ours: not reaped meanwhile
    ZeroReclaimCells(m.base, m.size, m.member);
    FreeSlot(m.base, m.member);
  }
  if (locked) {
    int live = ReapLocked(m.base, m.size, m.name, nullptr);
    if (live == 0 && m.store.StillLinked()) m.store.Unlink();
    m.store.Unlock();
  }
  m.store.Close();
}

// Detaches and drops the registry's reference of every open mapping `match` accepts. Caller holds the mutex.
template <typename Match>
void CloseMatchingLocked(Match match) {
  for (auto it = Mappings().begin(); it != Mappings().end();) {
    auto next = std::next(it);
    if (!it->second.released && match(it->second)) {
      DetachLocked(it->second);
      it->second.released = true;
      DropRef(it);
    }
    it = next;
  }
}

// What attaching found and made of the region, its lock held.
struct Prepared {
  uint8_t* base = nullptr;
  size_t mapped = 0;
  bool initialise = false;
  bool rebuilt = false;
};

// Maps the region for `spec` and makes its header right: a new or only-dead-members region is (re)initialised, a
// live one is checked against the spec. On failure nothing stays mapped. Caller holds the region lock.
Status Prepare(RegionStore& store, const RegionSpec& spec, const std::string& listed, size_t total, Prepared* out) {
  size_t fileSize = 0;
  Status st = store.Size(&fileSize);
  if (!st.ok()) return st;
  int32_t generation = 1;
  if (fileSize > 0 && fileSize < kHeaderSize) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "shared region '%s' is truncated (%zu bytes, smaller than its header); remove %s",
                  listed.c_str(), fileSize, store.location().c_str());
    return Status::Error(StatusCode::kCorrupt, buf);
  }
  if (fileSize == 0) {
    out->initialise = true;
  } else {
    st = store.Map(fileSize, &out->base);
    if (!st.ok()) return st;
    out->mapped = fileSize;
    st = CheckFrozenHeader(out->base, fileSize, listed, store.location());
    if (st.ok()) {
      if (ReapLocked(out->base, fileSize, listed, nullptr) == 0) {
        // Only dead processes used it (or none finished initialising it): rebuild rather than trust it.
        generation = Read<int32_t>(out->base, kGenerationOffset) + 1;
        out->initialise = true;
        out->rebuilt = LoadI32(out->base + kStateOffset) == kStateReady;
      } else {
        st = CheckCompatible(out->base, total, spec);
      }
    }
    if (!st.ok()) {
      UnmapRegion(out->base, out->mapped);
      return st;
    }
  }
  if (out->mapped != total) {
    if (out->base != nullptr) UnmapRegion(out->base, out->mapped);
    out->base = nullptr;
    // Grow, never shrink: a read-only watcher may still map the old size.
    if (out->initialise) st = store.Grow(total);
    if (st.ok()) st = store.Map(total, &out->base);
    if (!st.ok()) {
      out->base = nullptr;
      return st;
    }
    out->mapped = total;
  }
  if (out->initialise) InitHeader(out->base, total, spec, generation);
  return Status::Ok();
}

}  // namespace

RegionRegistry& RegionRegistry::Instance() {
  static RegionRegistry* r = new RegionRegistry();
  return *r;
}

Status RegionRegistry::Open(const RegionSpec& spec, RegionAttachment* out) {
  size_t total = 0;
  Status st = ValidateSpec(spec, &total);
  if (!st.ok()) return st;
  const std::string listed = ListedRegionName(spec.kind, spec.name);
  const std::string object = RegionObjectName(EffectiveUserId(), spec.kind, spec.name);
  std::lock_guard<std::mutex> guard(RegistryMutex());

  // One deadline for the whole attach: under churn (members of many processes attaching and detaching at once) the
  // last member can remove the file each time we wait for its lock, and a count of retries ran out (CI, Node 24).
  // Every retry means the region's last member left meanwhile (the host made progress), so only the time is
  // worth bounding.
  const double deadline = MonotonicMs() + spec.lockTimeoutMs;
  for (int attempt = 0;; attempt++) {
    const double left = deadline - MonotonicMs();
    if (attempt > 0 && left <= 0) break;  // the first attempt always runs, whatever the timeout
    RegionStore store;
    bool missing = false;
    st = RegionStore::Open(object, true, &store, &missing);
    if (st.code() == StatusCode::kBusy) continue;  // the file came and went under the open itself: the same churn
    if (!st.ok()) return st;
    if (!store.Lock(left > 0 ? static_cast<int>(left) + 1 : 0)) {
      return Status::Error(StatusCode::kBusy, "timed out waiting for the lock of shared region '" + listed + "' (" +
                                                  store.location() + "): another process holds it");
    }
    if (!store.StillLinked()) {  // the last member removed it while we waited: start over
      store.Unlock();
      continue;
    }
    Prepared p;
    st = Prepare(store, spec, listed, total, &p);
    if (!st.ok()) {
      store.Unlock();
      return st;
    }
    uint32_t serial = g_nextSerial++;
    uint32_t slot = 0;
    if (!ClaimSlot(p.base, spec.memberCapacity, spec.threadId, serial, &slot)) {
      UnmapRegion(p.base, p.mapped);
      store.Unlock();
      char buf[300];
      std::snprintf(buf, sizeof buf, "shared region '%s' has no free member slot (%u live attachments)", listed.c_str(),
                    spec.memberCapacity);
      return Status::Error(StatusCode::kFull, buf);
    }
    store.Unlock();

    uint64_t handle = NewHandleLocked();
    Mapping& m = Mappings()[handle];
    m.name = listed;
    m.store = static_cast<RegionStore&&>(store);
    m.base = p.base;
    m.size = p.mapped;
    m.member = slot;
    m.serial = serial;
    m.threadId = spec.threadId;
    m.attached = true;
    m.refs = 1;

    out->handle = handle;
    out->base = p.base;
    out->size = p.mapped;
    out->member = slot;
    out->payloadOffset = static_cast<uint32_t>(PayloadOffset(spec.memberCapacity));
    out->created = p.initialise;
    out->rebuilt = p.rebuilt;
    return Status::Ok();
  }
  char buf[300];
  std::snprintf(buf, sizeof buf, "shared region '%s' kept being removed while attaching, for %d ms", listed.c_str(),
                spec.lockTimeoutMs);
  return Status::Error(StatusCode::kBusy, buf);
}

Status RegionRegistry::Close(uint64_t handle) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it == Mappings().end() || it->second.released) return Status::Ok();  // closing twice is harmless
  DetachLocked(it->second);
  it->second.released = true;
  DropRef(it);
  return Status::Ok();
}

void RegionRegistry::CloseOwnedBy(uint64_t owner) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  CloseMatchingLocked([owner](const Mapping& m) { return m.owner == owner; });
}

void RegionRegistry::CloseAll() {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  CloseMatchingLocked([](const Mapping&) { return true; });
}

void RegionRegistry::SetOwner(uint64_t handle, uint64_t owner) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it != Mappings().end()) it->second.owner = owner;
}

void RegionRegistry::Retain(uint64_t handle) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it != Mappings().end()) it->second.refs++;
}

void RegionRegistry::Release(uint64_t handle) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it != Mappings().end()) DropRef(it);
}

int RegionRegistry::MaintainAll() {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  int reaped = 0;
  double now = MonotonicMs();
  for (auto& kv : Mappings()) {
    Mapping& m = kv.second;
    if (!m.attached || m.lost) continue;
    if (!RenewLease(m.base, m.member, m.serial, now) && m.store.TryLock()) {
      // Reaped while alive (this process could not renew in time, seen from another pid namespace): take the same
      // slot, and lane, back if no one has; else stop claiming it.
      if (!ReclaimSlot(m.base, m.member, m.threadId, m.serial)) m.lost = true;
      m.store.Unlock();
    }
    uint32_t capacity = Read<uint32_t>(m.base, kMemberCapacityOffset);
    bool judge = false;
    for (uint32_t i = 0; i < capacity && MemberSlot(i) + kMemberSlotSize <= m.size && !judge; i++)
      judge = MemberNeedsJudging(m.base, i, now);
    if (!judge || !m.store.TryLock()) continue;  // nothing to judge, or someone is attaching: next tick
    ReapLocked(m.base, m.size, m.name, &reaped);
    m.store.Unlock();
  }
  return reaped;
}

}  // namespace bulwark

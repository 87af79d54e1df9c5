// RegionRegistry's operations for tools that look after a host's regions without being members of them:
// read-only snapshots and member lists (bulwark top), listing names and removing stale ones (bulwark gc). Every one
// names a region by its listed name, "<kind>.<name>", and reaches only this user's regions.
#include <mutex>

#include "core/platform/clock.h"
#include "core/platform/process.h"
#include "core/region/region_header.h"
#include "core/region/region_layout.h"
#include "core/region/region_mappings.h"
#include "core/region/region_members.h"
#include "core/region/shared_region.h"
#include "core/util/raw_atomic.h"

namespace bulwark {

using namespace layout;
using namespace region_detail;

namespace {

Status ObjectOf(const std::string& listed, std::string* object) {
  std::string kind, name;
  if (!SplitListedName(listed, &kind, &name))
    return Status::Error(StatusCode::kInvalidArgument, "region name '" + listed + "' is not a <kind>.<name>");
  *object = RegionObjectName(EffectiveUserId(), kind, name);
  return Status::Ok();
}

}  // namespace

Status RegionRegistry::Snapshot(const std::string& listed, RegionSnapshot* out) {
  std::string object;
  Status st = ObjectOf(listed, &object);
  if (!st.ok()) return st;
  uint8_t* base = nullptr;
  size_t size = 0;
  st = SnapshotRegion(object, &base, &size);
  if (!st.ok()) return st;
  if (size < kHeaderSize) {
    FreeSnapshot(base, size);
    return Status::Error(StatusCode::kCorrupt, "shared region '" + listed + "' is empty or truncated");
  }
  st = CheckFrozenHeader(base, size, listed, RegionLocation(object));
  if (!st.ok()) {
    FreeSnapshot(base, size);
    return st;
  }
  std::lock_guard<std::mutex> guard(RegistryMutex());
  uint64_t handle = NewHandleLocked();
  Mapping& m = Mappings()[handle];
  m.name = listed;
  m.base = base;
  m.size = size;
  m.snapshot = true;
  m.refs = 1;
  out->handle = handle;
  out->base = base;
  out->size = size;
  return Status::Ok();
}

Status RegionRegistry::Members(uint64_t handle, std::vector<RegionMemberInfo>* out) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it == Mappings().end()) return Status::Error(StatusCode::kInvalidArgument, "unknown region handle");
  const Mapping& m = it->second;
  uint32_t capacity = Read<uint32_t>(m.base, kMemberCapacityOffset);
  double now = MonotonicMs();
  for (uint32_t i = 0; i < capacity && MemberSlot(i) + kMemberSlotSize <= m.size; i++) {
    int32_t pid = LoadI32(m.base + MemberSlot(i) + kMemberPidOffset);
    if (pid == 0) continue;
    RegionMemberInfo info;
    info.slot = i;
    info.pid = pid;
    info.threadId = Read<int32_t>(m.base, MemberSlot(i) + kMemberThreadOffset);
    info.alive = !MemberIsDead(m.base, i, m.name, now);
    out->push_back(info);
  }
  return Status::Ok();
}

std::vector<std::string> RegionRegistry::List() {
  std::vector<std::string> names;
  uint32_t uid = EffectiveUserId();
  for (const std::string& object : ListRegionObjects(RegionObjectPrefix(uid))) {
    std::string listed;
    if (ListedNameOfObject(uid, object, &listed)) names.push_back(listed);
  }
  return names;
}

Status RegionRegistry::RemoveIfStale(const std::string& listed, bool* removed) {
  *removed = false;
  std::string object;
  Status st = ObjectOf(listed, &object);
  if (!st.ok()) return st;
  std::lock_guard<std::mutex> guard(RegistryMutex());
  RegionStore store;
  bool missing = false;
  st = RegionStore::Open(object, false, &store, &missing);
  if (!st.ok() || missing) return st;
  if (!store.TryLock()) return Status::Ok();  // someone is attaching or detaching: not stale now
  size_t size = 0;
  uint8_t* base = nullptr;
  if (store.Size(&size).ok() && size >= kHeaderSize && store.StillLinked()) {
    st = store.Map(size, &base);
    if (st.ok() && CheckFrozenHeader(base, size, listed, store.location()).ok() &&
        ReapLocked(base, size, listed, nullptr) == 0) {
      *removed = store.Unlink().ok();
    }
  }
  if (base != nullptr) UnmapRegion(base, size);
  store.Unlock();
  return st;
}

Status RegionRegistry::Unlink(const std::string& listed) {
  std::string object;
  Status st = ObjectOf(listed, &object);
  if (!st.ok()) return st;
  RegionStore store;
  bool missing = false;
  st = RegionStore::Open(object, false, &store, &missing);
  if (!st.ok() || missing) return st;
  return store.Unlink();
}

Status RegionRegistry::Location(const std::string& listed, std::string* out) {
  std::string object;
  Status st = ObjectOf(listed, &object);
  if (st.ok()) *out = RegionLocation(object);
  return st;
}

}  // namespace bulwark

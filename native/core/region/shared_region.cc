// RegionRegistry: attaching to and detaching from named regions, and the references that keep mappings alive.
// The operations for tools that look at regions without joining them are in shared_region_tools.cc.
#include "core/region/shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/region/region_header.h"
#include "core/region/region_layout.h"
#include "core/region/region_mappings.h"
#include "core/region/region_members.h"
#include "core/region/shm_file.h"
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
  const std::string path = RegionPath(m.name);
  bool locked = LockWithTimeout(m.fd, 2000);
  size_t s = MemberSlot(m.member);
  bool stillOurs = LoadI32(m.base + s + kMemberPidOffset) == Self().pid &&
                   Read<uint32_t>(m.base, s + kMemberSerialOffset) == m.serial;
  if (stillOurs) {
    ZeroReclaimCells(m.base, m.size, m.member);
    FreeSlot(m.base, m.member);
  }
  if (locked) {
    int live = ReapLocked(m.base, m.size, m.name, nullptr);
    if (live == 0 && StillLinked(m.fd, path)) shm_unlink(path.c_str());
    Unlock(m.fd);
  }
  close(m.fd);
  m.fd = -1;
}

// Detaches and drops the registry's reference of every open mapping `match` accepts. Caller holds the mutex.
template <typename Match>
void CloseMatchingLocked(Match match) {
  for (auto it = Mappings().begin(); it != Mappings().end();) {
    auto next = std::next(it);
    if (it->second.fd != -2 && match(it->second)) {
      DetachLocked(it->second);
      it->second.fd = -2;
      DropRef(it);
    }
    it = next;
  }
}

}  // namespace

bool IsValidRegionName(const std::string& name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string RegionPath(const std::string& name) { return "/bulwark." + name; }

RegionRegistry& RegionRegistry::Instance() {
  static RegionRegistry* r = new RegionRegistry();
  return *r;
}

Status RegionRegistry::Open(const RegionSpec& spec, RegionAttachment* out) {
  size_t total = 0;
  Status st = ValidateSpec(spec, &total);
  if (!st.ok()) return st;
  const std::string path = RegionPath(spec.name);
  std::lock_guard<std::mutex> guard(RegistryMutex());

  for (int attempt = 0; attempt < 8; attempt++) {
    int fd = shm_open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return Status::Error(StatusCode::kSystem, ErrnoMessage("shm_open", spec.name));
    if (!LockWithTimeout(fd, spec.lockTimeoutMs)) {
      close(fd);
      return Status::Error(StatusCode::kBusy, "timed out waiting for the lock of shared region '" + spec.name +
                                                  "' (another process holds it)");
    }
    if (!StillLinked(fd, path)) {  // the last member removed it while we waited: start over
      Unlock(fd);
      close(fd);
      continue;
    }
    auto fail = [&](Status s, uint8_t* base, size_t mapped) {
      if (base != nullptr) munmap(base, mapped);
      Unlock(fd);
      close(fd);
      return s;
    };

    struct stat sb;
    if (fstat(fd, &sb) != 0)
      return fail(Status::Error(StatusCode::kSystem, ErrnoMessage("fstat", spec.name)), nullptr, 0);
    size_t fileSize = static_cast<size_t>(sb.st_size);
    uint8_t* base = nullptr;
    size_t mapped = 0;
    bool initialise = false;
    bool rebuilt = false;
    int32_t generation = 1;

    if (fileSize == 0) {
      initialise = true;
    } else if (fileSize < kHeaderSize) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "shared region '%s' is truncated (%zu bytes, smaller than its header); remove /dev/shm/bulwark.%s",
                    spec.name.c_str(), fileSize, spec.name.c_str());
      return fail(Status::Error(StatusCode::kCorrupt, buf), nullptr, 0);
    } else {
      st = MapShared(fd, fileSize, spec.name, &base);
      if (!st.ok()) return fail(st, nullptr, 0);
      mapped = fileSize;
      st = CheckFrozenHeader(base, fileSize, spec.name);
      if (!st.ok()) return fail(st, base, mapped);
      int live = ReapLocked(base, mapped, spec.name, nullptr);
      if (live == 0) {
        // Only dead processes used it (or none finished initialising it): rebuild rather than trust it.
        generation = Read<int32_t>(base, kGenerationOffset) + 1;
        initialise = true;
        rebuilt = LoadI32(base + kStateOffset) == kStateReady;
      } else {
        st = CheckCompatible(base, total, spec);
        if (!st.ok()) return fail(st, base, mapped);
      }
    }

    if (initialise) {
      if (base != nullptr && mapped != total) {
        munmap(base, mapped);
        base = nullptr;
      }
      if (base == nullptr || fileSize < total) {
        // Grow, never shrink: a read-only watcher may still map the old size.
        st = Reserve(fd, fileSize > total ? fileSize : total, spec.name);
        if (!st.ok()) return fail(st, base, mapped);
      }
      if (base == nullptr) {
        st = MapShared(fd, total, spec.name, &base);
        if (!st.ok()) return fail(st, nullptr, 0);
        mapped = total;
      }
      InitHeader(base, total, spec, generation);
    } else if (mapped != total) {
      munmap(base, mapped);
      st = MapShared(fd, total, spec.name, &base);
      if (!st.ok()) return fail(st, nullptr, 0);
      mapped = total;
    }

    uint32_t serial = g_nextSerial++;
    uint32_t slot = 0;
    if (!ClaimSlot(base, spec.memberCapacity, spec.threadId, serial, &slot)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "shared region '%s' has no free member slot (%u live attachments)",
                    spec.name.c_str(), spec.memberCapacity);
      return fail(Status::Error(StatusCode::kFull, buf), base, mapped);
    }
    Unlock(fd);

    uint64_t handle = NewHandleLocked();
    Mapping m;
    m.name = spec.name;
    m.fd = fd;
    m.base = base;
    m.size = mapped;
    m.member = slot;
    m.serial = serial;
    m.attached = true;
    m.refs = 1;
    Mappings()[handle] = m;

    out->handle = handle;
    out->base = base;
    out->size = mapped;
    out->member = slot;
    out->payloadOffset = static_cast<uint32_t>(PayloadOffset(spec.memberCapacity));
    out->created = initialise;
    out->rebuilt = rebuilt;
    return Status::Ok();
  }
  return Status::Error(StatusCode::kBusy, "shared region '" + spec.name + "' kept being removed while attaching");
}

Status RegionRegistry::Close(uint64_t handle) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it == Mappings().end() || (!it->second.attached && !it->second.snapshot) || it->second.fd == -2)
    return Status::Ok();  // closing twice is harmless
  DetachLocked(it->second);
  it->second.fd = -2;  // marks "registry reference dropped"
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

int RegionRegistry::ReapAll() {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  int reaped = 0;
  for (auto& kv : Mappings()) {
    Mapping& m = kv.second;
    if (!m.attached || m.fd < 0) continue;
    if (!TryLock(m.fd)) continue;  // someone is attaching: try next tick
    ReapLocked(m.base, m.size, m.name, &reaped);
    Unlock(m.fd);
  }
  return reaped;
}

}  // namespace bulwark

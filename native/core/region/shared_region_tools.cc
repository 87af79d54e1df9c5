// RegionRegistry's operations for tools that look after a host's regions without being members of them:
// read-only snapshots and member lists (bulwark top), listing names and removing stale ones (bulwark gc).
#include "core/region/shared_region.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
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

Status RegionRegistry::Snapshot(const std::string& name, RegionSnapshot* out) {
  if (!IsValidRegionName(name))
    return Status::Error(StatusCode::kInvalidArgument, "region name '" + name + "' is not valid");
  const std::string path = RegionPath(name);
  int fd = shm_open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return Status::Error(StatusCode::kSystem, ErrnoMessage("shm_open", name));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || static_cast<size_t>(sb.st_size) < kHeaderSize) {
    close(fd);
    return Status::Error(StatusCode::kCorrupt, "shared region '" + name + "' is empty or truncated");
  }
  size_t size = static_cast<size_t>(sb.st_size);
  // A private writable mapping: reads see the live shared pages, and a stray write could never reach them.
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return Status::Error(StatusCode::kSystem, ErrnoMessage("mmap", name));
  uint8_t* base = static_cast<uint8_t*>(p);
  Status st = CheckFrozenHeader(base, size, name);
  if (!st.ok()) {
    munmap(base, size);
    return st;
  }
  std::lock_guard<std::mutex> guard(RegistryMutex());
  uint64_t handle = NewHandleLocked();
  Mapping m;
  m.name = name;
  m.fd = -1;
  m.base = base;
  m.size = size;
  m.snapshot = true;
  m.refs = 1;
  Mappings()[handle] = m;
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
  for (uint32_t i = 0; i < capacity && MemberSlot(i) + kMemberSlotSize <= m.size; i++) {
    int32_t pid = LoadI32(m.base + MemberSlot(i) + kMemberPidOffset);
    if (pid == 0) continue;
    RegionMemberInfo info;
    info.slot = i;
    info.pid = pid;
    info.threadId = Read<int32_t>(m.base, MemberSlot(i) + kMemberThreadOffset);
    info.alive = !MemberIsDead(m.base, i, m.name);
    out->push_back(info);
  }
  return Status::Ok();
}

std::vector<std::string> RegionRegistry::List() {
  std::vector<std::string> names;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir)) {
    std::string n = e->d_name;
    if (n.rfind("bulwark.", 0) == 0 && IsValidRegionName(n.substr(8))) names.push_back(n.substr(8));
  }
  closedir(dir);
  return names;
}

Status RegionRegistry::RemoveIfStale(const std::string& name, bool* removed) {
  *removed = false;
  if (!IsValidRegionName(name))
    return Status::Error(StatusCode::kInvalidArgument, "region name '" + name + "' is not valid");
  const std::string path = RegionPath(name);
  std::lock_guard<std::mutex> guard(RegistryMutex());
  int fd = shm_open(path.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0)
    return errno == ENOENT ? Status::Ok() : Status::Error(StatusCode::kSystem, ErrnoMessage("shm_open", name));
  if (!TryLock(fd)) {  // someone is attaching or detaching: not stale now
    close(fd);
    return Status::Ok();
  }
  struct stat sb;
  uint8_t* base = nullptr;
  size_t size = 0;
  Status st = Status::Ok();
  if (fstat(fd, &sb) == 0 && static_cast<size_t>(sb.st_size) >= kHeaderSize && StillLinked(fd, path)) {
    size = static_cast<size_t>(sb.st_size);
    st = MapShared(fd, size, name, &base);
    if (st.ok() && CheckFrozenHeader(base, size, name).ok() && ReapLocked(base, size, name, nullptr) == 0) {
      *removed = shm_unlink(path.c_str()) == 0;
    }
  }
  if (base != nullptr) munmap(base, size);
  Unlock(fd);
  close(fd);
  return st;
}

Status RegionRegistry::Unlink(const std::string& name) {
  if (!IsValidRegionName(name))
    return Status::Error(StatusCode::kInvalidArgument, "region name '" + name + "' is not valid");
  if (shm_unlink(RegionPath(name).c_str()) != 0 && errno != ENOENT)
    return Status::Error(StatusCode::kSystem, ErrnoMessage("shm_unlink", name));
  return Status::Ok();
}

}  // namespace bulwark

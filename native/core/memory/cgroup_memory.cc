#include "core/memory/cgroup_memory.h"

#include <string_view>
#include <utility>

#include "core/cpu/proc_file.h"
#include "core/cpu/proc_text.h"
#include "core/platform/memory_stats.h"

namespace bulwark {

using namespace cgroup_internal;

namespace {

// A single decimal figure (memory.current, memory.usage_in_bytes); false (and why) when missing or not a number.
bool ReadBytes(const std::string& path, uint64_t* bytes, std::string* why) {
  std::string text;
  if (!ReadSmallFile(path, &text, why)) return false;
  if (ParseU64(text, bytes)) return true;
  *why = path + " is not a number";
  return false;
}

// A limit file at `dir`: v2's memory.max ("max": none) or v1's memory.limit_in_bytes. 0 for none, missing (the root
// cgroup has no memory.max) or malformed (noted).
uint64_t ReadLimitAt(const std::string& dir, bool v2, std::string* notes) {
  std::string path = JoinPath(dir, v2 ? "memory.max" : "memory.limit_in_bytes"), text, why;
  if (!ReadSmallFile(path, &text, &why)) return 0;
  if (v2 && Trim(text) == "max") return 0;
  uint64_t bytes = 0;
  if (ParseU64(text, &bytes) && bytes > 0) return bytes;
  if (notes != nullptr) AddNote(notes, path + " is malformed: limit ignored");
  return 0;
}

// memory.stat's inactive file pages (v2 "inactive_file", v1 the hierarchy's "total_inactive_file") and, on v1, the
// kernel's hierarchical limit. Lines it does not know are skipped; a missing file leaves both 0.
void ReadMemoryStat(const std::string& dir, bool v2, uint64_t* inactiveFile, uint64_t* hierarchicalLimit) {
  *inactiveFile = 0;
  *hierarchicalLimit = 0;
  ForEachLine(JoinPath(dir, "memory.stat"), [&](std::string_view line) {
    std::string_view key;
    uint64_t value = 0;
    if (!NextToken(&line, &key) || !ParseU64(line, &value)) return;
    if (key == (v2 ? "inactive_file" : "total_inactive_file")) *inactiveFile = value;
    if (!v2 && key == "hierarchical_memory_limit") *hierarchicalLimit = value;
  });
}

}  // namespace

const char* MemorySourceName(MemorySourceKind kind) {
  switch (kind) {
    case MemorySourceKind::kCgroupV1: return "cgroup-v1";
    case MemorySourceKind::kCgroupV2: return "cgroup-v2";
    default: return "host";
  }
}

CgroupMemoryReader::CgroupMemoryReader(std::string root) : root_(root.empty() ? "/" : std::move(root)) { Detect(); }

void CgroupMemoryReader::BecomeHost(const std::string& why) {
  info_.kind = MemorySourceKind::kHost;
  info_.cgroupPath.clear();
  info_.usagePath = HostMemorySource(root_);
  AddNote(&info_.note, why);
  uint64_t total = 0, available = 0;
  std::string unreadable;
  if (!ReadHostMemory(root_, &total, &available, &unreadable))
    AddNote(&info_.note, unreadable + ": no memory figures available");
}

// Prefers the v2 hierarchy when its root lists the memory controller, else v1's memory hierarchy, else the host.
void CgroupMemoryReader::Detect() {
  info_ = MemorySourceInfo();
  ProcCgroups proc = ReadProcCgroups(root_);
  if (!proc.found) return BecomeHost(NoMemoryCgroupReason());
  Mounts mounts = FindMounts(root_);
  std::string notes, controllers, ignored;
  std::string controllersPath = JoinPath(JoinPath(root_, mounts.v2.dir), "cgroup.controllers");
  bool v2 =
      mounts.v2.found && ReadSmallFile(controllersPath, &controllers, &ignored) && HasToken(controllers, "memory", ' ');
  const Mount& mount = v2 ? mounts.v2 : mounts.memory;
  const std::string& procPath = v2 ? proc.v2 : proc.memory;
  Hierarchy h;
  if (ResolveHierarchy(root_, mount, procPath, v2 ? "v2" : "memory", &h, &notes)) {
    std::string usagePath = h.File(v2 ? "memory.current" : "memory.usage_in_bytes"), why;
    uint64_t usage = 0;
    if (ReadBytes(usagePath, &usage, &why)) {
      hierarchy_ = h;
      info_.kind = v2 ? MemorySourceKind::kCgroupV2 : MemorySourceKind::kCgroupV1;
      info_.cgroupPath = procPath;
      info_.usagePath = usagePath;
      info_.note = notes;
      ReadLimit(&info_.note);  // notes a malformed limit file once, here
      return;
    }
    AddNote(&notes, why);
  }
  AddNote(&notes, "no readable cgroup memory accounting: using host-wide memory");
  BecomeHost(notes);
}

uint64_t CgroupMemoryReader::ReadLimit(std::string* notes) const {
  bool v2 = info_.kind == MemorySourceKind::kCgroupV2;
  uint64_t smallest = 0;
  WalkUp(hierarchy_, [&](const std::string& dir) {
    uint64_t limit = ReadLimitAt(dir, v2, notes);
    if (limit > 0 && (smallest == 0 || limit < smallest)) smallest = limit;
    return false;
  });
  if (!v2) {
    uint64_t inactive = 0, hierarchical = 0;
    ReadMemoryStat(hierarchy_.Dir(), false, &inactive, &hierarchical);
    if (hierarchical > 0 && (smallest == 0 || hierarchical < smallest)) smallest = hierarchical;
  }
  return smallest;
}

bool CgroupMemoryReader::Sample(MemorySample* out) {
  *out = MemorySample();
  uint64_t resident = 0;
  std::string why;
  if (ReadResidentBytes(root_, &resident, &why)) {
    out->resident = static_cast<double>(resident);
  } else if (!residentNoted_) {
    residentNoted_ = true;
    AddNote(&info_.note, why + ": resident memory unknown");
  }
  uint64_t total = 0, available = 0;
  bool host = ReadHostMemory(root_, &total, &available, &why);
  if (info_.kind != MemorySourceKind::kHost) {
    bool v2 = info_.kind == MemorySourceKind::kCgroupV2;
    uint64_t usage = 0;
    if (!ReadBytes(info_.usagePath, &usage, &why)) {
      if (++failedReads_ < kFailedReadsBeforeHost) return false;  // perhaps passing: the last figures stay
      failedReads_ = 0;
      BecomeHost(info_.usagePath + " became unreadable (" + why + "): switched to host-wide memory");
    } else {
      failedReads_ = 0;
      uint64_t limit = ReadLimit(nullptr);
      // A limit at or above the host's memory never binds: the host runs out first.
      if (limit > 0 && (!host || limit < total)) {
        uint64_t inactive = 0, hierarchical = 0;
        ReadMemoryStat(hierarchy_.Dir(), v2, &inactive, &hierarchical);
        out->used = static_cast<double>(usage > inactive ? usage - inactive : 0);
        out->limit = static_cast<double>(limit);
        out->limited = true;
        return true;
      }
    }
  }
  if (!host) return false;
  out->used = static_cast<double>(total - available);
  out->limit = static_cast<double>(total);
  return true;
}

}  // namespace bulwark

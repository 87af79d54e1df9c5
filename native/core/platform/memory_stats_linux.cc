#include <unistd.h>

#include <string_view>

#include "core/cpu/proc_file.h"
#include "core/cpu/proc_text.h"
#include "core/platform/memory_stats.h"

namespace bulwark {

using cgroup_internal::ForEachLine;
using cgroup_internal::JoinPath;
using cgroup_internal::NextToken;
using cgroup_internal::ParseU64;

namespace {

// One /proc/meminfo line, "Name:   1234 kB": the value in bytes when the name is `wanted`.
bool MeminfoValue(std::string_view line, std::string_view wanted, uint64_t* bytes) {
  std::string_view name, value, unit;
  if (!NextToken(&line, &name) || name.size() != wanted.size() + 1 || name.substr(0, wanted.size()) != wanted ||
      name.back() != ':')
    return false;
  uint64_t kb = 0;
  if (!NextToken(&line, &value) || !ParseU64(value, &kb) || kb > UINT64_MAX / 1024) return false;
  *bytes = NextToken(&line, &unit) && unit == "kB" ? kb * 1024 : kb;
  return true;
}

uint64_t PageSize() {
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<uint64_t>(page) : 4096;
}

}  // namespace

std::string HostMemorySource(const std::string& root) { return JoinPath(root, "/proc/meminfo"); }

const char* NoMemoryCgroupReason() { return "no /proc/self/cgroup: using host-wide /proc/meminfo"; }

bool ReadHostMemory(const std::string& root, uint64_t* totalBytes, uint64_t* availableBytes, std::string* why) {
  const std::string path = HostMemorySource(root);
  // MemAvailable (Linux 3.14+) counts the page cache the kernel can reclaim; older kernels have only its parts.
  uint64_t total = 0, available = 0, free = 0, buffers = 0, cached = 0;
  bool haveTotal = false, haveAvailable = false, haveFree = false;
  bool opened = ForEachLine(path, [&](std::string_view line) {
    haveTotal = haveTotal || MeminfoValue(line, "MemTotal", &total);
    haveAvailable = haveAvailable || MeminfoValue(line, "MemAvailable", &available);
    haveFree = haveFree || MeminfoValue(line, "MemFree", &free);
    if (!MeminfoValue(line, "Buffers", &buffers)) MeminfoValue(line, "Cached", &cached);
  });
  if (!opened) {
    *why = path + " is missing or unreadable";
    return false;
  }
  if (!haveTotal || total == 0 || (!haveAvailable && !haveFree)) {
    *why = path + " has no valid MemTotal and MemAvailable lines";
    return false;
  }
  if (!haveAvailable) available = free + buffers + cached;
  *totalBytes = total;
  *availableBytes = available < total ? available : total;
  return true;
}

// /proc/self/statm: "size resident shared text lib data dt", in pages.
bool ReadResidentBytes(const std::string& root, uint64_t* bytes, std::string* why) {
  const std::string path = JoinPath(root, "/proc/self/statm");
  std::string text;
  if (!cgroup_internal::ReadSmallFile(path, &text, why)) return false;
  std::string_view rest(text), size, resident;
  uint64_t pages = 0;
  if (!NextToken(&rest, &size) || !NextToken(&rest, &resident) || !ParseU64(resident, &pages) ||
      pages > UINT64_MAX / PageSize()) {
    *why = path + " is malformed";
    return false;
  }
  *bytes = pages * PageSize();
  return true;
}

}  // namespace bulwark

#include <windows.h>
// psapi.h needs windows.h first
#include <psapi.h>

#include "core/platform/memory_stats.h"

namespace bulwark {

std::string HostMemorySource(const std::string&) { return "GlobalMemoryStatusEx()"; }

const char* NoMemoryCgroupReason() { return "Windows has no cgroups: using host-wide memory (GlobalMemoryStatusEx)"; }

bool ReadHostMemory(const std::string&, uint64_t* totalBytes, uint64_t* availableBytes, std::string* why) {
  MEMORYSTATUSEX status;
  status.dwLength = sizeof status;
  if (!GlobalMemoryStatusEx(&status) || status.ullTotalPhys == 0) {
    *why = "GlobalMemoryStatusEx() failed";
    return false;
  }
  *totalBytes = status.ullTotalPhys;
  *availableBytes = status.ullAvailPhys < status.ullTotalPhys ? status.ullAvailPhys : status.ullTotalPhys;
  return true;
}

bool ReadResidentBytes(const std::string&, uint64_t* bytes, std::string* why) {
  PROCESS_MEMORY_COUNTERS counters;
  // K32GetProcessMemoryInfo lives in kernel32 (Windows 7 and later): no psapi.lib to link.
  if (!K32GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) {
    *why = "GetProcessMemoryInfo() failed";
    return false;
  }
  *bytes = counters.WorkingSetSize;
  return true;
}

}  // namespace bulwark

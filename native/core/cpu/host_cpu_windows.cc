#include <windows.h>

#include "core/cpu/host_cpu.h"

namespace bulwark::cgroup_internal {

namespace {

uint64_t Ticks(const FILETIME& t) { return (static_cast<uint64_t>(t.dwHighDateTime) << 32) | t.dwLowDateTime; }

int CountBits(uint64_t mask) {
  int n = 0;
  for (; mask != 0; mask &= mask - 1) n++;
  return n;
}

}  // namespace

std::string HostTimesSource(const std::string&) { return "GetSystemTimes()"; }

const char* NoCgroupReason() { return "Windows has no cgroups: using host-wide CPU time (GetSystemTimes)"; }

bool ReadHostTimesNs(const std::string&, uint64_t* busyNs, uint64_t* totalNs, std::string* why) {
  FILETIME idle, kernel, user;
  if (!GetSystemTimes(&idle, &kernel, &user)) {
    *why = "GetSystemTimes() failed";
    return false;
  }
  // Kernel time includes idle time; all three are in units of 100 ns.
  uint64_t total = Ticks(kernel) + Ticks(user);
  uint64_t idleTicks = Ticks(idle);
  *totalNs = total * 100;
  *busyNs = (total >= idleTicks ? total - idleTicks : 0) * 100;
  return true;
}

int ProcessAffinityCpus() {
  DWORD_PTR process = 0, system = 0;
  if (!GetProcessAffinityMask(GetCurrentProcess(), &process, &system)) return 0;
  return CountBits(process);  // the mask covers the process's processor group
}

double OnlineCpus() {
  DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
  return n > 0 ? static_cast<double>(n) : 1;
}

}  // namespace bulwark::cgroup_internal

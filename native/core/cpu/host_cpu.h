// The CPU figures that do not come from cgroups, by OS: host-wide CPU time (the source when a process has no
// cgroup, and the only one outside Linux), the CPUs online, and this process's affinity mask where the system has
// one. Linux reads <root>/proc/stat (root is the reader's, a fixture tree in tests) and sched_getaffinity; macOS asks
// the Mach host for its CPU load ticks and has no affinity masks; Windows reads GetSystemTimes and the process's
// affinity mask.
#pragma once
#include <cstdint>
#include <string>

namespace bulwark::cgroup_internal {

// Host-wide busy and total CPU time since boot, in ns; false (and why) when unreadable. Only deltas are used.
bool ReadHostTimesNs(const std::string& root, uint64_t* busyNs, uint64_t* totalNs, std::string* why);

// What ReadHostTimesNs reads, for loadInfo().usagePath.
std::string HostTimesSource(const std::string& root);

// Why the host-wide source is used when this process is in no cgroup (no /proc/self/cgroup below root).
const char* NoCgroupReason();

// CPUs in this process's affinity mask; 0 when the system has no such mask or it is unknown.
int ProcessAffinityCpus();

double OnlineCpus();

}  // namespace bulwark::cgroup_internal

// The CPU time counters the reader samples: a cgroup's (v1 cpuacct.usage, v2 cpu.stat) or the host's (/proc/stat).
// Each returns false and says why when the file is missing or malformed.
#pragma once
#include <cstdint>
#include <string>

namespace bulwark::cgroup_internal {

// cpuacct.usage: nanoseconds, one number.
bool ReadV1UsageNs(const std::string& path, uint64_t* ns, std::string* why);

// cpu.stat's usage_usec line, in nanoseconds.
bool ReadV2UsageNs(const std::string& path, uint64_t* ns, std::string* why);

// /proc/stat's "cpu" line: user nice system idle iowait irq softirq steal [guest guest_nice]. guest time is already
// counted in user and nice, so it is left out of the total. Busy = total - idle - iowait.
bool ReadHostTimesNs(const std::string& path, uint64_t* busyNs, uint64_t* totalNs, std::string* why);

}  // namespace bulwark::cgroup_internal

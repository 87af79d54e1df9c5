// The CPU time counters of a cgroup the reader samples (v1 cpuacct.usage, v2 cpu.stat); the host's are in
// host_cpu.h. Each returns false and says why when the file is missing or malformed.
#pragma once
#include <cstdint>
#include <string>

namespace bulwark::cgroup_internal {

// cpuacct.usage: nanoseconds, one number.
bool ReadV1UsageNs(const std::string& path, uint64_t* ns, std::string* why);

// cpu.stat's usage_usec line, in nanoseconds.
bool ReadV2UsageNs(const std::string& path, uint64_t* ns, std::string* why);

}  // namespace bulwark::cgroup_internal

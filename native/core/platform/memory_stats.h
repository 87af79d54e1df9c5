// The memory figures that do not come from cgroups, by OS: the host's physical memory (the source when a process has
// no cgroup memory limit, and the only one outside Linux) and this process's resident set. Linux reads
// <root>/proc/meminfo and <root>/proc/self/statm (root is the reader's, a fixture tree in tests); macOS asks the Mach
// host and task; Windows calls GlobalMemoryStatusEx and GetProcessMemoryInfo.
#pragma once
#include <cstdint>
#include <string>

namespace bulwark {

// The host's physical memory and what of it the kernel can still hand out without swapping (Linux: MemAvailable,
// which counts reclaimable page cache), in bytes; false (and why) when unreadable.
bool ReadHostMemory(const std::string& root, uint64_t* totalBytes, uint64_t* availableBytes, std::string* why);

// What ReadHostMemory reads, for loadInfo().memory.
std::string HostMemorySource(const std::string& root);

// Why the host's memory is the source when this process is in no cgroup (no /proc/self/cgroup below root).
const char* NoMemoryCgroupReason();

// This process's resident set, in bytes; false (and why) when unreadable.
bool ReadResidentBytes(const std::string& root, uint64_t* bytes, std::string* why);

}  // namespace bulwark

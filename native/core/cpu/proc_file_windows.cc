// Windows has no /proc and no cgroups: no such file ever opens, and the CPU reader uses the host's counters
// (host_cpu_windows.cc).
#include <cerrno>

#include "core/cpu/proc_file.h"

namespace bulwark::cgroup_internal {

File::File(const std::string&) : error_(ENOENT) {}

File::~File() {}

ssize_t File::ReadUpTo(char*, size_t) { return -1; }

bool IsDirectory(const std::string&) { return false; }

bool IsFile(const std::string&) { return false; }

}  // namespace bulwark::cgroup_internal

// PLACEHOLDER being replaced by the cgroup CPU reader work (helper). Host-only, minimal.
#include "core/cgroup_cpu.h"

namespace bulwark {
const char* CpuSourceName(CpuSourceKind kind) {
  switch (kind) {
    case CpuSourceKind::kCgroupV1: return "cgroup-v1";
    case CpuSourceKind::kCgroupV2: return "cgroup-v2";
    default: return "host";
  }
}
CgroupCpuReader::CgroupCpuReader(std::string root, int affinityCpus) : root_(std::move(root)), affinityOverride_(affinityCpus) {}
void CgroupCpuReader::Detect() {}
bool CgroupCpuReader::ReadUsageNs(uint64_t*, uint64_t*) { return false; }
bool CgroupCpuReader::Sample(uint64_t, double*) { return false; }
bool ParseCpuList(const std::string&, int* count) { *count = 0; return true; }
}  // namespace bulwark

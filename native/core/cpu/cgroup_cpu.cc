#include "core/cpu/cgroup_cpu.h"

#include <string>
#include <utility>

#include "core/cpu/cgroup_limits.h"
#include "core/cpu/cgroup_mounts.h"
#include "core/cpu/cpu_usage_counters.h"
#include "core/cpu/host_cpu.h"
#include "core/cpu/proc_file.h"
#include "core/cpu/proc_text.h"

namespace bulwark {

using namespace cgroup_internal;  // this file's own helpers, split out by what they read

namespace {

// Turns `info` into the host-wide source (host_cpu.h); `why` says why no cgroup accounting is used.
void BecomeHost(const std::string& root, const std::string& why, CpuSourceInfo* info) {
  info->kind = CpuSourceKind::kHost;
  info->quotaCores = 0;
  info->cpusetCpus = 0;
  info->cgroupPath.clear();
  info->usagePath = HostTimesSource(root);
  AddNote(&info->note, why);
  uint64_t busy = 0, total = 0;
  std::string unreadable;
  if (!ReadHostTimesNs(root, &busy, &total, &unreadable)) AddNote(&info->note, unreadable + ": no CPU usage available");
  info->cores = EffectiveCores(*info);
}

// Adopts a cgroup source found readable. `notes` carries what was ignored or replaced on the way.
void Adopt(CpuSourceKind kind, const std::string& cgroupPath, const std::string& usagePath, const std::string& notes,
           CpuSourceInfo* info) {
  info->kind = kind;
  info->cgroupPath = cgroupPath;
  info->usagePath = usagePath;
  info->note = notes;
  info->cores = EffectiveCores(*info);
}

// cgroup v2, when its cpu.stat is readable. Without the cpu controller there is usage but no quota.
bool TryV2(const std::string& root, const std::string& procPath, const Mount& mount, bool withController,
           std::string* notes, CpuSourceInfo* info) {
  std::string local = *notes;
  Hierarchy h;
  if (!ResolveHierarchy(root, mount, procPath, "v2", &h, &local)) return false;
  std::string usagePath = h.File("cpu.stat"), why;
  uint64_t usage = 0;
  if (!ReadV2UsageNs(usagePath, &usage, &why)) {
    AddNote(notes, why);
    return false;
  }
  if (withController) {
    info->quotaCores = SmallestQuota(h, ReadV2QuotaAt, &local);
  } else {
    AddNote(&local, "cgroup v2 without the cpu controller: usage only, no quota");
  }
  info->cpusetCpus = NearestCpusetCount(h, "cpuset.cpus.effective", &local);
  Adopt(CpuSourceKind::kCgroupV2, procPath, usagePath, local, info);
  return true;
}

// cgroup v1, when cpuacct.usage is readable; the quota and the cpuset come from their own hierarchies.
bool TryV1(const std::string& root, const ProcCgroups& proc, const Mounts& mounts, std::string* notes,
           CpuSourceInfo* info) {
  std::string local = *notes;
  Hierarchy acct;
  if (!ResolveHierarchy(root, mounts.cpuacct, proc.cpuacct, "cpuacct", &acct, &local)) return false;
  std::string usagePath = acct.File("cpuacct.usage"), why;
  uint64_t usage = 0;
  if (!ReadV1UsageNs(usagePath, &usage, &why)) {
    AddNote(notes, why);
    return false;
  }
  Hierarchy cpu, cpuset;
  if (ResolveHierarchy(root, mounts.cpu, proc.cpu, "cpu", &cpu, &local))
    info->quotaCores = SmallestQuota(cpu, ReadV1QuotaAt, &local);
  if (ResolveHierarchy(root, mounts.cpuset, proc.cpuset, "cpuset", &cpuset, &local))
    info->cpusetCpus = NearestCpusetCount(cpuset, "cpuset.cpus", &local);
  Adopt(CpuSourceKind::kCgroupV1, proc.cpuacct, usagePath, local, info);
  return true;
}

double ClampPermille(double value) {
  if (!(value > 0)) return 0;  // also NaN
  return value > 1000 ? 1000 : value;
}

}  // namespace

// -----------------------------------------------------------------------------------------------------------------

const char* CpuSourceName(CpuSourceKind kind) {
  switch (kind) {
    case CpuSourceKind::kCgroupV1: return "cgroup-v1";
    case CpuSourceKind::kCgroupV2: return "cgroup-v2";
    default: return "host";
  }
}

CgroupCpuReader::CgroupCpuReader(std::string root, int affinityCpus)
    : root_(root.empty() ? "/" : std::move(root)), affinityOverride_(affinityCpus) {
  Detect();
}

// Prefers the hierarchy that holds the CPU controller: v2 when its cgroup.controllers lists cpu, else v1's cpuacct,
// else v2's cpu.stat alone (usage without a quota), else the host's /proc/stat.
void CgroupCpuReader::Detect() {
  info_ = CpuSourceInfo();
  info_.affinityCpus = ReadAffinityCpus(affinityOverride_);
  std::string notes;
  ProcCgroups proc = ReadProcCgroups(root_);
  if (!proc.found) {
    BecomeHost(root_, NoCgroupReason(), &info_);
    return;
  }
  Mounts mounts = FindMounts(root_);
  std::string controllers, ignored;
  std::string controllersPath = JoinPath(JoinPath(root_, mounts.v2.dir), "cgroup.controllers");
  bool v2HasCpu =
      mounts.v2.found && ReadSmallFile(controllersPath, &controllers, &ignored) && HasToken(controllers, "cpu", ' ');
  if (v2HasCpu && TryV2(root_, proc.v2, mounts.v2, true, &notes, &info_)) return;
  if (TryV1(root_, proc, mounts, &notes, &info_)) return;
  if (!v2HasCpu && TryV2(root_, proc.v2, mounts.v2, false, &notes, &info_)) return;
  AddNote(&notes, "no readable cgroup CPU accounting: using host-wide /proc/stat");
  BecomeHost(root_, notes, &info_);
}

bool CgroupCpuReader::ReadUsageNs(uint64_t* usageNs, uint64_t* hostTotalNs) {
  *hostTotalNs = 0;
  switch (info_.kind) {
    case CpuSourceKind::kCgroupV1: return ReadV1UsageNs(info_.usagePath, usageNs, &readError_);
    case CpuSourceKind::kCgroupV2: return ReadV2UsageNs(info_.usagePath, usageNs, &readError_);
    default: return ReadHostTimesNs(root_, usageNs, hostTotalNs, &readError_);
  }
}

void CgroupCpuReader::Prime(uint64_t wallNs, uint64_t usageNs, uint64_t hostTotalNs) {
  primed_ = true;
  lastWallNs_ = wallNs;
  lastUsageNs_ = usageNs;
  lastHostTotal_ = hostTotalNs;
}

bool CgroupCpuReader::Sample(uint64_t wallNs, double* permille) {
  uint64_t usage = 0, hostTotal = 0;
  if (!ReadUsageNs(&usage, &hostTotal)) {
    if (info_.kind == CpuSourceKind::kHost) {
      primed_ = false;
      return false;
    }
    // The baseline stays: after a passing failure the next good read measures the longer span.
    if (++failedReads_ < kFailedReadsBeforeHost) return false;
    failedReads_ = 0;
    primed_ = false;
    BecomeHost(root_, info_.usagePath + " became unreadable (" + readError_ + "): switched to host-wide /proc/stat",
               &info_);
    if (ReadUsageNs(&usage, &hostTotal)) Prime(wallNs, usage, hostTotal);
    return false;
  }
  failedReads_ = 0;
  if (!primed_) {
    Prime(wallNs, usage, hostTotal);
    return false;
  }
  bool host = info_.kind == CpuSourceKind::kHost;
  if (usage < lastUsageNs_ || (host && hostTotal < lastHostTotal_)) {
    // A counter went backwards (the cgroup was recreated, or the host counters reset): no meaningful delta.
    Prime(wallNs, usage, hostTotal);
    *permille = 0;
    return true;
  }
  if (host) {
    if (hostTotal == lastHostTotal_) return false;  // not one tick yet: keep the baseline, measure a longer span
    *permille = ClampPermille(static_cast<double>(usage - lastUsageNs_) /
                              static_cast<double>(hostTotal - lastHostTotal_) * 1000);
  } else {
    if (wallNs < lastWallNs_) {  // the caller's clock went backwards: start over
      Prime(wallNs, usage, hostTotal);
      return false;
    }
    if (wallNs == lastWallNs_) return false;
    double cores = info_.cores > 0 ? info_.cores : 1;
    *permille = ClampPermille(static_cast<double>(usage - lastUsageNs_) / static_cast<double>(wallNs - lastWallNs_) /
                              cores * 1000);
  }
  Prime(wallNs, usage, hostTotal);
  return true;
}

}  // namespace bulwark

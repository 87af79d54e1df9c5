// How much CPU this process may use: the CFS quota (v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), the
// cpuset and the affinity mask. Each reader returns 0 for "no limit" (or unknown) and notes a malformed file it had
// to ignore. ParseCpuList, the public cpuset parser, is declared in cgroup_cpu.h.
#pragma once
#include <string>

#include "core/cpu/cgroup_cpu.h"
#include "core/cpu/cgroup_mounts.h"

namespace bulwark::cgroup_internal {

// cpu.max: "<quota> <period>" or "max <period>" (older kernels: just "max").
double ReadV2QuotaAt(const std::string& dir, std::string* notes);

// cpu.cfs_quota_us (-1: no limit) over cpu.cfs_period_us (0 is an error).
double ReadV1QuotaAt(const std::string& dir, std::string* notes);

// A parent's limit binds its children too: the smallest limit from the process's cgroup up to the mount root.
double SmallestQuota(const Hierarchy& h, double (*readAt)(const std::string&, std::string*), std::string* notes);

// CPUs in the nearest cpuset list from the process's cgroup up (a v2 cgroup without the cpuset controller has no
// file of its own). 0 when unknown; a malformed list is ignored with a note.
int NearestCpusetCount(const Hierarchy& h, const char* fileName, std::string* notes);

// override >= 0: that value (tests); else the CPUs in this process's affinity mask, 0 when unknown.
int ReadAffinityCpus(int override);

// min(quota, cpuset, affinity) over the known ones, else the online CPUs.
double EffectiveCores(const CpuSourceInfo& info);

}  // namespace bulwark::cgroup_internal

// CPU usage of the cgroup this process runs in (docs/rules/signals.md), with a host-wide fallback.
//
// Everything is read below an injectable root directory ("/" in production, a fixture tree in tests):
// <root>/proc/self/cgroup, <root>/proc/self/mountinfo, <root>/sys/fs/cgroup/..., <root>/proc/stat.
// Missing or malformed files never crash and never block: the reader falls back (cgroup v2 -> v1 -> host) and
// says why in `note`. Outside Linux there are no cgroups: the reader is the host-wide source of host_cpu.h, with the
// process's affinity mask where the system has one.
#pragma once
#include <cstdint>
#include <string>

namespace bulwark {

enum class CpuSourceKind : int32_t { kHost = 0, kCgroupV1 = 1, kCgroupV2 = 2 };

const char* CpuSourceName(CpuSourceKind kind);  // "host", "cgroup-v1", "cgroup-v2"

struct CpuSourceInfo {
  CpuSourceKind kind = CpuSourceKind::kHost;
  double cores = 1;        // min(quota / period, CPUs in the cpuset, CPUs in the affinity mask), may be fractional
  double quotaCores = 0;   // quota / period, 0 when there is no limit
  int cpusetCpus = 0;      // 0 when unknown
  int affinityCpus = 0;    // 0 when unknown
  std::string cgroupPath;  // the process's cgroup as listed in /proc/self/cgroup ("" for host)
  std::string usagePath;   // the file the usage is read from
  std::string note;        // why a fallback was taken, or "" when the preferred source works
};

// Reads of a cgroup's usage that may fail in a row before a reader gives the cgroup up for the host (1.5 s at the
// sampler's 500 ms): one failure can be a passing one, as when the process moves to another cgroup.
constexpr int kFailedReadsBeforeHost = 3;

class CgroupCpuReader {
 public:
  // affinityCpus < 0: read this process's affinity mask (sched_getaffinity); >= 0: use that value (tests).
  explicit CgroupCpuReader(std::string root = "/", int affinityCpus = -1);

  const CpuSourceInfo& info() const { return info_; }

  // Raw usage in permille of the CPU this process may use, over the time since the previous call:
  // delta(cpu time) / delta(wallNs) / cores * 1000, clamped to [0, 1000]. The first call only primes the reader
  // and returns false. A counter that goes backwards yields 0. A failed read returns false and keeps the baseline;
  // after kFailedReadsBeforeHost failures in a row the reader switches to the host source (and says so in
  // info().note).
  bool Sample(uint64_t wallNs, double* permille);

 private:
  void Detect();
  bool ReadUsageNs(uint64_t* usageNs, uint64_t* hostTotalNs);
  void Prime(uint64_t wallNs, uint64_t usageNs, uint64_t hostTotalNs);

  std::string root_;
  int affinityOverride_;
  CpuSourceInfo info_;
  bool primed_ = false;
  uint64_t lastUsageNs_ = 0;
  uint64_t lastWallNs_ = 0;
  uint64_t lastHostTotal_ = 0;  // host source: /proc/stat total jiffies scaled to ns
  std::string readError_;       // why the last usage read failed
  int failedReads_ = 0;         // usage reads failed in a row
};

// Parses a cpuset list such as "0-2,4" into a CPU count (4). "" gives 0. Returns false on malformed input
// ("3-1", letters, empty ranges).
bool ParseCpuList(const std::string& text, int* count);

}  // namespace bulwark

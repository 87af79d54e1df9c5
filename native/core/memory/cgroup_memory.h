// Memory of the cgroup this process runs in, against its limit (docs/rules/signals.md, "Memory"), with a host-wide
// fallback, and this process's resident set.
//
// As the CPU reader (core/cpu/cgroup_cpu.h) does, everything is read below an injectable root directory ("/" in
// production, a fixture tree in tests), and missing or malformed files never crash and never block: the reader falls
// back (cgroup v2 -> v1 -> host) and says why in `note`. Outside Linux the host's memory is the source.
//
// What counts is the working set: the cgroup's usage less its inactive file pages, which the kernel reclaims before
// it declares the cgroup out of memory (the figure the kubelet evicts on). The limit is the smallest one from the
// process's cgroup up to the hierarchy's root (v1 also reports the kernel's own, hierarchical_memory_limit); a limit
// at or above the host's memory does not bind, and then the host's used memory against its total is the measure.
#pragma once
#include <cstdint>
#include <string>

#include "core/cpu/cgroup_cpu.h"
#include "core/cpu/cgroup_mounts.h"

namespace bulwark {

enum class MemorySourceKind : int32_t { kHost = 0, kCgroupV1 = 1, kCgroupV2 = 2 };

const char* MemorySourceName(MemorySourceKind kind);  // "host", "cgroup-v1", "cgroup-v2"

struct MemorySourceInfo {
  MemorySourceKind kind = MemorySourceKind::kHost;
  std::string cgroupPath;  // the process's memory cgroup as listed in /proc/self/cgroup ("" for host)
  std::string usagePath;   // memory.current, memory.usage_in_bytes, or the host's source
  std::string note;        // why a fallback was taken or a file ignored; "" when the preferred source works
};

struct MemorySample {
  double used = 0;       // bytes in use against `limit`: the cgroup's working set, or the host's total less available
  double limit = 0;      // bytes: the cgroup's binding limit, or the host's physical memory; 0 when unknown
  double resident = 0;   // bytes resident for this process; 0 when unknown
  bool limited = false;  // a cgroup limit binds (else the host's memory is the measure)
};

class CgroupMemoryReader {
 public:
  explicit CgroupMemoryReader(std::string root = "/");

  const MemorySourceInfo& info() const { return info_; }

  // Reads the current figures (the limit too: a container's limit can change while it runs). Returns false when no
  // source gives a used and a limit figure (the sampler keeps the last known ones then); `resident` is read either
  // way. A failed read of the cgroup's usage gives false; after kFailedReadsBeforeHost in a row (core/cpu/cgroup_cpu.h)
  // the reader switches to the host (and says so in info().note).
  bool Sample(MemorySample* out);

 private:
  void Detect();
  void BecomeHost(const std::string& why);
  // The cgroup's binding limit in bytes (0: none); malformed files are noted in `notes` when it is not null.
  uint64_t ReadLimit(std::string* notes) const;

  std::string root_;
  MemorySourceInfo info_;
  cgroup_internal::Hierarchy hierarchy_;  // the process's memory cgroup (unused for the host)
  bool residentNoted_ = false;
  int failedReads_ = 0;  // cgroup usage reads failed in a row
};

}  // namespace bulwark

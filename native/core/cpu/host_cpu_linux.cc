#include <sched.h>
#include <unistd.h>

#include <string_view>

#include "core/cpu/host_cpu.h"
#include "core/cpu/proc_file.h"
#include "core/cpu/proc_text.h"

namespace bulwark::cgroup_internal {

std::string HostTimesSource(const std::string& root) { return JoinPath(root, "/proc/stat"); }

const char* NoCgroupReason() { return "no /proc/self/cgroup: using host-wide /proc/stat"; }

// /proc/stat's "cpu" line: user nice system idle iowait irq softirq steal [guest guest_nice]. guest time is already
// counted in user and nice, so it is left out of the total. Busy = total - idle - iowait.
bool ReadHostTimesNs(const std::string& root, uint64_t* busyNs, uint64_t* totalNs, std::string* why) {
  const std::string path = HostTimesSource(root);
  std::string line;
  if (!ReadFirstLine(path, &line, why)) return false;
  std::string_view rest(line), token;
  if (!NextToken(&rest, &token) || token != "cpu") {
    *why = path + " does not start with a cpu line";
    return false;
  }
  uint64_t fields[8] = {0};
  int count = 0;
  while (count < 8 && NextToken(&rest, &token)) {
    if (!ParseU64(token, &fields[count])) {
      *why = path + ": malformed cpu line";
      return false;
    }
    count++;
  }
  if (count < 4) {
    *why = path + ": too few fields on the cpu line";
    return false;
  }
  uint64_t total = 0;
  for (uint64_t f : fields) total += f;  // wraps rather than traps on absurd values: only deltas are used
  uint64_t idle = fields[3] + fields[4];
  long tick = sysconf(_SC_CLK_TCK);
  uint64_t nsPerTick = tick > 0 ? 1000000000ull / static_cast<uint64_t>(tick) : 10000000ull;
  *totalNs = total * nsPerTick;
  *busyNs = (total >= idle ? total - idle : 0) * nsPerTick;
  return true;
}

int ProcessAffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  // More CPUs than a cpu_set_t holds: ask again with a larger mask.
  const int kMaxCpus = 1 << 16;
  cpu_set_t* big = CPU_ALLOC(kMaxCpus);
  if (big == nullptr) return 0;
  size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  CPU_ZERO_S(size, big);
  int count = sched_getaffinity(0, size, big) == 0 ? CPU_COUNT_S(size, big) : 0;
  CPU_FREE(big);
  return count;
}

double OnlineCpus() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<double>(n) : 1;
}

}  // namespace bulwark::cgroup_internal

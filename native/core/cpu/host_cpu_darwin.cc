#include <mach/mach.h>
#include <unistd.h>

#include "core/cpu/host_cpu.h"

namespace bulwark::cgroup_internal {

std::string HostTimesSource(const std::string&) { return "host_statistics(HOST_CPU_LOAD_INFO)"; }

const char* NoCgroupReason() { return "macOS has no cgroups: using host-wide CPU load (host_statistics)"; }

bool ReadHostTimesNs(const std::string&, uint64_t* busyNs, uint64_t* totalNs, std::string* why) {
  host_cpu_load_info_data_t load;
  mach_msg_type_number_t count = HOST_CPU_LOAD_INFO_COUNT;
  mach_port_t host = mach_host_self();
  kern_return_t rc = host_statistics(host, HOST_CPU_LOAD_INFO, reinterpret_cast<host_info_t>(&load), &count);
  mach_port_deallocate(mach_task_self(), host);
  if (rc != KERN_SUCCESS) {
    *why = "host_statistics(HOST_CPU_LOAD_INFO) failed";
    return false;
  }
  uint64_t busy =
      uint64_t(load.cpu_ticks[CPU_STATE_USER]) + load.cpu_ticks[CPU_STATE_SYSTEM] + load.cpu_ticks[CPU_STATE_NICE];
  uint64_t total = busy + load.cpu_ticks[CPU_STATE_IDLE];
  long tick = sysconf(_SC_CLK_TCK);
  uint64_t nsPerTick = tick > 0 ? 1000000000ull / static_cast<uint64_t>(tick) : 10000000ull;
  *busyNs = busy * nsPerTick;
  *totalNs = total * nsPerTick;
  return true;
}

int ProcessAffinityCpus() { return 0; }  // macOS has affinity hints, no masks

double OnlineCpus() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<double>(n) : 1;
}

}  // namespace bulwark::cgroup_internal

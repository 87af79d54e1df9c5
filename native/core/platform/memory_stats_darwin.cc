#include <mach/mach.h>
#include <sys/sysctl.h>
#include <unistd.h>

#include "core/platform/memory_stats.h"

namespace bulwark {

std::string HostMemorySource(const std::string&) { return "sysctl(hw.memsize), host_statistics64(HOST_VM_INFO64)"; }

const char* NoMemoryCgroupReason() { return "macOS has no cgroups: using host-wide memory (host_statistics64)"; }

bool ReadHostMemory(const std::string&, uint64_t* totalBytes, uint64_t* availableBytes, std::string* why) {
  uint64_t total = 0;
  size_t length = sizeof total;
  if (sysctlbyname("hw.memsize", &total, &length, nullptr, 0) != 0 || total == 0) {
    *why = "sysctl(hw.memsize) failed";
    return false;
  }
  vm_statistics64_data_t vm;
  mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
  mach_port_t host = mach_host_self();
  kern_return_t rc = host_statistics64(host, HOST_VM_INFO64, reinterpret_cast<host_info64_t>(&vm), &count);
  mach_port_deallocate(mach_task_self(), host);
  if (rc != KERN_SUCCESS) {
    *why = "host_statistics64(HOST_VM_INFO64) failed";
    return false;
  }
  long page = sysconf(_SC_PAGESIZE);
  uint64_t pageBytes = page > 0 ? static_cast<uint64_t>(page) : 4096;
  // Free pages, and the file-backed and purgeable ones the system gives back before it compresses or swaps.
  uint64_t available = (uint64_t(vm.free_count) + vm.external_page_count + vm.purgeable_count) * pageBytes;
  *totalBytes = total;
  *availableBytes = available < total ? available : total;
  return true;
}

bool ReadResidentBytes(const std::string&, uint64_t* bytes, std::string* why) {
  mach_task_basic_info_data_t info;
  mach_msg_type_number_t count = MACH_TASK_BASIC_INFO_COUNT;
  if (task_info(mach_task_self(), MACH_TASK_BASIC_INFO, reinterpret_cast<task_info_t>(&info), &count) != KERN_SUCCESS) {
    *why = "task_info(MACH_TASK_BASIC_INFO) failed";
    return false;
  }
  *bytes = info.resident_size;
  return true;
}

}  // namespace bulwark

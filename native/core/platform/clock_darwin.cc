#include <time.h>

#include "core/platform/clock.h"

namespace bulwark {

// libuv reads mach_absolute_time, which stops while the machine sleeps: CLOCK_UPTIME_RAW is that clock in ns.
uint64_t MonotonicNs() { return clock_gettime_nsec_np(CLOCK_UPTIME_RAW); }

}  // namespace bulwark

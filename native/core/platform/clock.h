// Host-wide monotonic time, on the timeline libuv's uv_hrtime uses (so performance.now() plus one offset maps onto
// it, lib/foundation/signals/clock.ts): CLOCK_MONOTONIC on Linux, the uptime clock of mach_absolute_time on macOS,
// QueryPerformanceCounter on Windows. Every process of a host reads the same clock, so shared rolling windows and
// member leases written by several processes agree.
#pragma once
#include <cstdint>

namespace bulwark {

uint64_t MonotonicNs();

inline double MonotonicMs() { return static_cast<double>(MonotonicNs()) / 1e6; }

}  // namespace bulwark

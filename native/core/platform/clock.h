// Host-wide monotonic time. CLOCK_MONOTONIC is shared by every process of a host, so shared rolling windows
// written by several processes agree on bucket boundaries.
#pragma once
#include <cstdint>
#include <ctime>

namespace bulwark {

inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline double MonotonicMs() { return static_cast<double>(MonotonicNs()) / 1e6; }

}  // namespace bulwark

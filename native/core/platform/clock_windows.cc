#include <windows.h>

#include "core/platform/clock.h"

namespace bulwark {

uint64_t MonotonicNs() {
  static const uint64_t frequency = [] {
    LARGE_INTEGER f;
    QueryPerformanceFrequency(&f);
    return static_cast<uint64_t>(f.QuadPart);
  }();
  LARGE_INTEGER now;
  QueryPerformanceCounter(&now);
  uint64_t ticks = static_cast<uint64_t>(now.QuadPart);
  // Split to keep ticks * 1e9 from overflowing 64 bits.
  return ticks / frequency * 1000000000ull + ticks % frequency * 1000000000ull / frequency;
}

}  // namespace bulwark

// The one assertion the C++ harnesses share: count a failed check, say where, and go on (main exits non-zero).
#pragma once
#include <cstdio>

namespace bulwark_test {
inline int g_failures = 0;
}  // namespace bulwark_test

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      bulwark_test::g_failures++;                                                   \
    }                                                                               \
  } while (0)

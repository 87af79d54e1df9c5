#define _CRT_RAND_S
#include <stdlib.h>

#include <cstring>

#include "core/platform/os_random.h"

namespace bulwark {

bool OsRandomBytes(void* out, size_t length) {
  auto* bytes = static_cast<unsigned char*>(out);
  for (size_t done = 0; done < length;) {
    unsigned int word;
    if (rand_s(&word) != 0) return false;
    size_t n = length - done < sizeof word ? length - done : sizeof word;
    std::memcpy(bytes + done, &word, n);
    done += n;
  }
  return true;
}

}  // namespace bulwark

// Random bytes from the operating system's generator, for secrets such as a keyed table's seed: /dev/urandom on
// POSIX systems, RtlGenRandom (rand_s) on Windows.
#pragma once
#include <cstddef>

namespace bulwark {

// Fills `out` with `length` random bytes; false when the generator could not be read (the bytes are then unset).
bool OsRandomBytes(void* out, size_t length);

}  // namespace bulwark

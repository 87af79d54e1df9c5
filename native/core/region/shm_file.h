// File-level helpers for a shared region's POSIX shared-memory object: locking, identity, sizing and mapping.
// Internal to the region code (shared_region.cc and its helpers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/util/status.h"

namespace bulwark {
namespace region_detail {

// "<what> for region '<name>' failed: <strerror(errno)>".
std::string ErrnoMessage(const char* what, const std::string& name);

// Takes the exclusive flock on `fd`, retrying every millisecond until `timeoutMs` has passed.
bool LockWithTimeout(int fd, int timeoutMs);
// Takes the exclusive flock on `fd` only if no one holds it now.
bool TryLock(int fd);
void Unlock(int fd);

// True when `fd` is still the object the name points at (it may have been unlinked and re-created meanwhile).
bool StillLinked(int fd, const std::string& path);

// Makes the file exactly `total` bytes with its pages reserved, so that a full /dev/shm is an error here
// instead of a SIGBUS at the first write.
Status Reserve(int fd, size_t total, const std::string& name);

Status MapShared(int fd, size_t size, const std::string& name, uint8_t** out);

}  // namespace region_detail
}  // namespace bulwark

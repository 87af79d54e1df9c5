#include <unistd.h>

#include "core/platform/region_store.h"

namespace bulwark {

// The user's own temporary directory (/var/folders/.../T, mode 0700): POSIX shared memory on macOS has names of at
// most 31 characters, cannot be listed and cannot be flocked, so regions are plain files mapped shared here. /tmp
// when the system gives none (a user without a home).
const std::string& RegionDirectory() {
  static const std::string dir = [] {
    char buf[1024];
    size_t n = confstr(_CS_DARWIN_USER_TEMP_DIR, buf, sizeof buf);
    std::string found = n > 0 && n <= sizeof buf ? std::string(buf) : std::string("/tmp");
    while (found.size() > 1 && found.back() == '/') found.pop_back();
    return found;
  }();
  return dir;
}

// APFS and HFS+ have no posix_fallocate: the file is sized (ftruncate, done by the caller) and its pages come on
// first touch.
Status ReserveSpace(int, size_t, const std::string&) { return Status::Ok(); }

}  // namespace bulwark

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/platform/region_store.h"

namespace bulwark {

// tmpfs: the pages are memory, shared by every process that maps the file.
const std::string& RegionDirectory() {
  static const std::string dir = "/dev/shm";
  return dir;
}

Status ReserveSpace(int fd, size_t total, const std::string& location) {
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(total));
  if (rc == 0 || rc == EOPNOTSUPP || rc == EINVAL) return Status::Ok();
  char buf[512];
  std::snprintf(buf, sizeof buf, "reserving %zu bytes for shared region file %s failed (is /dev/shm full?): %s", total,
                location.c_str(), std::strerror(rc));
  return Status::Error(StatusCode::kSystem, buf);
}

}  // namespace bulwark

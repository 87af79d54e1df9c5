#include "core/region/shm_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/platform/clock.h"

namespace bulwark {
namespace region_detail {

namespace {

void SleepMs(int ms) {
  timespec ts{0, static_cast<long>(ms) * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace

std::string ErrnoMessage(const char* what, const std::string& name) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s for region '%s' failed: %s", what, name.c_str(), std::strerror(errno));
  return buf;
}

bool LockWithTimeout(int fd, int timeoutMs) {
  double deadline = MonotonicMs() + timeoutMs;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (MonotonicMs() >= deadline) return false;
    SleepMs(1);
  }
}

bool TryLock(int fd) { return flock(fd, LOCK_EX | LOCK_NB) == 0; }

void Unlock(int fd) { flock(fd, LOCK_UN); }

bool StillLinked(int fd, const std::string& path) {
  int other = shm_open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (other < 0) return false;
  struct stat a, b;
  bool same = fstat(fd, &a) == 0 && fstat(other, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
  close(other);
  return same;
}

Status Reserve(int fd, size_t total, const std::string& name) {
  if (ftruncate(fd, static_cast<off_t>(total)) != 0)
    return Status::Error(StatusCode::kSystem, ErrnoMessage("ftruncate", name));
#ifdef __linux__
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(total));
  if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
    errno = rc;
    return Status::Error(StatusCode::kSystem, ErrnoMessage("reserving shared memory (is /dev/shm full?)", name));
  }
#endif
  return Status::Ok();
}

Status MapShared(int fd, size_t size, const std::string& name, uint8_t** out) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return Status::Error(StatusCode::kSystem, ErrnoMessage("mmap", name));
  *out = static_cast<uint8_t*>(p);
  return Status::Ok();
}

}  // namespace region_detail
}  // namespace bulwark

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/platform/clock.h"
#include "core/platform/process.h"
#include "core/platform/region_store.h"
#include "core/platform/thread.h"

namespace bulwark {

namespace {

constexpr int kOpenFlags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;  // O_NONBLOCK: a planted FIFO never blocks

Status SystemError(const char* what, const std::string& location) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s for shared region file %s failed: %s", what, location.c_str(),
                std::strerror(errno));
  return Status::Error(StatusCode::kSystem, buf);
}

// Why `st` (the object at `location`) may not be mapped, or Ok.
Status CheckOwned(const struct stat& st, const std::string& location) {
  uint32_t self = EffectiveUserId();
  if (st.st_uid != self) {
    return Status::Owner("shared region file " + location + " belongs to " + DescribeUser(st.st_uid) + ", not to " +
                             DescribeUser(self) +
                             " that runs this process: another user made it first. bulwark never maps a region "
                             "another user owns; remove the file (its owner or root can) or use another name",
                         location, st.st_uid);
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::Owner(
        "shared region file " + location + " is not a regular file: bulwark maps only files it made; remove it",
        location, st.st_uid);
  }
  if ((st.st_mode & 077) != 0) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "shared region file %s is open to other users (mode 0%03o): bulwark maps only region files that "
                  "no one but their owner may read or write; remove it",
                  location.c_str(), static_cast<unsigned>(st.st_mode & 0777));
    return Status::Owner(buf, location, st.st_uid);
  }
  return Status::Ok();
}

// An open() refused (EACCES, EPERM) or a link where a file should be (ELOOP): name the owner if it can be seen.
Status Refused(const std::string& location) {
  int error = errno;
  struct stat st;
  if (lstat(location.c_str(), &st) == 0) {
    Status owned = CheckOwned(st, location);
    if (!owned.ok()) return owned;
  }
  errno = error;
  return SystemError("open", location);
}

bool TakeFlock(int fd) { return flock(fd, LOCK_EX | LOCK_NB) == 0; }

}  // namespace

std::string RegionLocation(const std::string& fileName) { return RegionDirectory() + "/" + fileName; }

Status RegionStore::Open(const std::string& fileName, bool create, RegionStore* out, bool* missing) {
  const std::string location = RegionLocation(fileName);
  *missing = false;
  for (int attempt = 0; attempt < 8; attempt++) {
    int fd = -1;
    if (create) {
      fd = open(location.c_str(), kOpenFlags | O_CREAT | O_EXCL, 0600);
      if (fd >= 0) fchmod(fd, 0600);  // exactly 0600, whatever the umask took away
      if (fd < 0 && errno != EEXIST) return errno == EACCES ? Refused(location) : SystemError("create", location);
    }
    if (fd < 0) fd = open(location.c_str(), kOpenFlags);
    if (fd < 0) {
      if (errno == ENOENT && create) continue;  // removed since the exclusive create failed: create it now
      if (errno == ENOENT) {
        *missing = true;
        return Status::Ok();
      }
      if (errno == EACCES || errno == EPERM || errno == ELOOP) return Refused(location);
      return SystemError("open", location);
    }
    struct stat st;
    Status owned = fstat(fd, &st) == 0 ? CheckOwned(st, location) : SystemError("fstat", location);
    if (!owned.ok()) {
      close(fd);
      return owned;
    }
    out->Close();
    out->handle_ = fd;
    out->fileName_ = fileName;
    out->location_ = location;
    return Status::Ok();
  }
  return Status::Error(StatusCode::kBusy, "shared region file " + location + " kept being removed while opening it");
}

bool RegionStore::Lock(int timeoutMs) {
  int fd = static_cast<int>(handle_);
  double deadline = MonotonicMs() + timeoutMs;
  for (;;) {
    if (TakeFlock(fd)) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (MonotonicMs() >= deadline) return false;
    SleepMs(1);
  }
}

bool RegionStore::TryLock() { return TakeFlock(static_cast<int>(handle_)); }

void RegionStore::Unlock() { flock(static_cast<int>(handle_), LOCK_UN); }

bool RegionStore::StillLinked() const {
  struct stat named, ours;
  return lstat(location_.c_str(), &named) == 0 && fstat(static_cast<int>(handle_), &ours) == 0 &&
         named.st_ino == ours.st_ino && named.st_dev == ours.st_dev;
}

Status RegionStore::Size(size_t* out) {
  struct stat st;
  if (fstat(static_cast<int>(handle_), &st) != 0) return SystemError("fstat", location_);
  *out = static_cast<size_t>(st.st_size);
  return Status::Ok();
}

Status RegionStore::Grow(size_t total) {
  size_t now = 0;
  Status st = Size(&now);
  if (!st.ok() || now >= total) return st;
  if (ftruncate(static_cast<int>(handle_), static_cast<off_t>(total)) != 0) return SystemError("ftruncate", location_);
  return ReserveSpace(static_cast<int>(handle_), total, location_);
}

Status RegionStore::Map(size_t size, uint8_t** out) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(handle_), 0);
  if (p == MAP_FAILED) return SystemError("mmap", location_);
  *out = static_cast<uint8_t*>(p);
  return Status::Ok();
}

Status RegionStore::Unlink() {
  if (unlink(location_.c_str()) != 0 && errno != ENOENT) return SystemError("unlink", location_);
  return Status::Ok();
}

void RegionStore::Close() {
  if (handle_ != kNone) close(static_cast<int>(handle_));
  handle_ = kNone;
}

void UnmapRegion(uint8_t* base, size_t size) { munmap(base, size); }

Status SnapshotRegion(const std::string& fileName, uint8_t** base, size_t* size) {
  const std::string location = RegionLocation(fileName);
  int fd = open(location.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno == EACCES || errno == ELOOP ? Refused(location) : SystemError("open", location);
  struct stat st;
  Status owned = fstat(fd, &st) == 0 ? CheckOwned(st, location) : SystemError("fstat", location);
  if (!owned.ok()) {
    close(fd);
    return owned;
  }
  *size = static_cast<size_t>(st.st_size);
  if (*size == 0) {
    close(fd);
    *base = nullptr;
    return Status::Ok();
  }
  // Private and writable: reads see the live shared pages, and a stray write could never reach them.
  void* p = mmap(nullptr, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return SystemError("mmap", location);
  *base = static_cast<uint8_t*>(p);
  return Status::Ok();
}

void FreeSnapshot(uint8_t* base, size_t size) {
  if (base != nullptr) munmap(base, size);
}

std::vector<std::string> ListRegionObjects(const std::string& prefix) {
  std::vector<std::string> names;
  DIR* dir = opendir(RegionDirectory().c_str());
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) names.emplace_back(e->d_name);
  }
  closedir(dir);
  return names;
}

}  // namespace bulwark

// Opening and reading a /proc or cgroup file on POSIX systems (Linux has them; elsewhere the paths simply do not
// exist and the CPU reader falls back to the host's counters).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/cpu/proc_file.h"

namespace bulwark::cgroup_internal {

File::File(const std::string& path) {
  // O_NONBLOCK: opening or reading a FIFO planted where a cgroup file should be must not hang the reader.
  do {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) error_ = errno;
}

File::~File() {
  if (fd_ >= 0) close(fd_);
}

ssize_t File::ReadUpTo(char* buf, size_t cap) {
  size_t len = 0;
  while (len < cap) {
    ssize_t n = read(fd_, buf + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = errno;
      return -1;
    }
    if (n == 0) break;
    len += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(len);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace bulwark::cgroup_internal

#include "core/cpu/proc_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bulwark::cgroup_internal {

namespace {

std::string ErrnoText(int error) { return error != 0 ? std::strerror(error) : "read failed"; }

}  // namespace

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

bool ReadSmallFile(const std::string& path, std::string* out, std::string* why) {
  File file(path);
  if (!file.ok()) {
    *why = "cannot open " + path + ": " + ErrnoText(file.error());
    return false;
  }
  char buf[kSmallFileBytes + 1];
  ssize_t n = file.ReadUpTo(buf, sizeof buf);
  if (n < 0) {
    *why = "cannot read " + path + ": " + ErrnoText(file.error());
    return false;
  }
  if (static_cast<size_t>(n) > kSmallFileBytes) {
    *why = path + " is larger than " + std::to_string(kSmallFileBytes) + " bytes";
    return false;
  }
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

bool ReadFirstLine(const std::string& path, std::string* out, std::string* why) {
  File file(path);
  if (!file.ok()) {
    *why = "cannot open " + path + ": " + ErrnoText(file.error());
    return false;
  }
  char buf[kSmallFileBytes];
  ssize_t n = file.ReadUpTo(buf, sizeof buf);
  if (n < 0) {
    *why = "cannot read " + path + ": " + ErrnoText(file.error());
    return false;
  }
  const char* end = static_cast<const char*>(std::memchr(buf, '\n', static_cast<size_t>(n)));
  if (end == nullptr && static_cast<size_t>(n) == sizeof buf) {
    *why = "the first line of " + path + " is too long";
    return false;
  }
  out->assign(buf, end != nullptr ? static_cast<size_t>(end - buf) : static_cast<size_t>(n));
  return true;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string JoinPath(const std::string& base, std::string_view rel) {
  std::string out = base;
  while (!out.empty() && out.back() == '/') out.pop_back();
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  if (!rel.empty()) {
    out.push_back('/');
    out.append(rel.data(), rel.size());
  }
  return out.empty() ? "/" : out;
}

}  // namespace bulwark::cgroup_internal

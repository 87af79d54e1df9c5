// Reading the small text files of /proc and /sys/fs/cgroup. Every read goes through a fixed-size buffer: a huge or
// endless file (a FIFO, a device) can neither exhaust memory nor block start-up.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark::cgroup_internal {

constexpr size_t kSmallFileBytes = 4096;  // cpu.max, cpu.stat, cpuacct.usage, cpuset lists, /proc/stat's first line
constexpr size_t kLineBytes = 8192;       // one line of mountinfo or /proc/self/cgroup (paths up to PATH_MAX)

// A read-only, non-blocking file descriptor, closed on destruction.
class File {
 public:
  explicit File(const std::string& path);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  bool ok() const { return fd_ >= 0; }
  int error() const { return error_; }

  // Reads up to `cap` bytes, across short reads, until end of file or the buffer is full. -1 on a read error.
  ssize_t ReadUpTo(char* buf, size_t cap);

 private:
  int fd_ = -1;
  int error_ = 0;
};

// The whole content of a small file, or false (and why) when it is missing, unreadable or larger than expected.
bool ReadSmallFile(const std::string& path, std::string* out, std::string* why);

// The first line of a file whose later lines may be long (/proc/stat's "intr" line runs to kilobytes).
bool ReadFirstLine(const std::string& path, std::string* out, std::string* why);

// Calls onLine(std::string_view) for each line of a file of any length. Lines longer than kLineBytes are skipped:
// no line we look for is that long. Returns false when the file cannot be opened.
template <typename OnLine>
bool ForEachLine(const std::string& path, OnLine onLine) {
  File file(path);
  if (!file.ok()) return false;
  std::vector<char> buf(kLineBytes);
  size_t len = 0;
  bool skipping = false;  // inside an over-long line: drop bytes until its newline
  for (;;) {
    ssize_t n = file.ReadUpTo(buf.data() + len, buf.size() - len);
    if (n <= 0) break;
    len += static_cast<size_t>(n);
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
      if (buf[i] != '\n') continue;
      if (!skipping) onLine(std::string_view(buf.data() + start, i - start));
      skipping = false;
      start = i + 1;
    }
    if (start == 0 && len == buf.size()) {  // a full buffer without a newline
      skipping = true;
      len = 0;
      continue;
    }
    std::memmove(buf.data(), buf.data() + start, len - start);
    len -= start;
  }
  if (len > 0 && !skipping) onLine(std::string_view(buf.data(), len));  // last line without a newline
  return true;
}

bool IsDirectory(const std::string& path);
bool IsFile(const std::string& path);

// root + "/x/y", without doubled slashes ("/" + "/x" -> "/x").
std::string JoinPath(const std::string& base, std::string_view rel);

}  // namespace bulwark::cgroup_internal

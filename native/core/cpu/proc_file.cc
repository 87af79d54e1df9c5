#include "core/cpu/proc_file.h"

#include <cerrno>
#include <cstring>

namespace bulwark::cgroup_internal {

namespace {

std::string ErrnoText(int error) { return error != 0 ? std::strerror(error) : "read failed"; }

}  // namespace

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

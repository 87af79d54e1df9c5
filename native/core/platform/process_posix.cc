#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "core/platform/process.h"

namespace bulwark {

ProcessId CurrentProcessId() { return static_cast<ProcessId>(getpid()); }

uint32_t EffectiveUserId() { return static_cast<uint32_t>(geteuid()); }

std::string DescribeUser(int64_t uid) {
  char text[64];
  std::snprintf(text, sizeof text, "uid %lld", static_cast<long long>(uid));
  if (uid < 0) return text;
  passwd entry;
  passwd* found = nullptr;
  char buf[1024];
  if (getpwuid_r(static_cast<uid_t>(uid), &entry, buf, sizeof buf, &found) == 0 && found != nullptr)
    return std::string(text) + " (" + found->pw_name + ")";
  return text;
}

bool ProcessGone(ProcessId pid) { return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace bulwark

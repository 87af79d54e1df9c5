#include "core/platform/process.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bulwark {

namespace {

// Reads the state letter (field 3) and the start time (field 22) of the process's main thread, which are the
// process's own. Through /proc/<pid>/task/<pid>/stat rather than /proc/<pid>/stat: qemu-user (an arm64 container on
// an x64 host, and the reverse) answers a process's reads of its own /proc/<pid>/stat with a made-up line whose start
// time differs from what other processes read, which would make every member look like a reused pid.
bool ReadProcStat(pid_t pid, char* state, uint64_t* startTime) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/stat", static_cast<int>(pid), static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // The command name is in parentheses and may contain spaces: count fields after the last ')'.
  char* p = std::strrchr(buf, ')');
  if (p == nullptr) return false;
  p++;
  while (*p == ' ') p++;
  *state = *p;
  // After ')' comes field 3 (state); start time is field 22.
  for (int field = 3; field < 22; field++) {
    while (*p == ' ') p++;
    if (*p == '\0') return false;
    while (*p != ' ' && *p != '\0') p++;
  }
  while (*p == ' ') p++;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(p, &end, 10);
  if (end == p || errno != 0) return false;
  *startTime = static_cast<uint64_t>(v);
  return true;
}

}  // namespace

uint64_t ProcessStartTime(ProcessId pid) {
  char state = 0;
  uint64_t start = 0;
  return ReadProcStat(pid, &state, &start) ? start : 0;
}

uint64_t PidNamespaceId() {
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

Liveness ProcessLiveness(ProcessId pid, uint64_t recordedStartTime) {
  if (pid <= 0) return Liveness::kDead;
  if (kill(pid, 0) != 0 && errno == ESRCH) return Liveness::kDead;
  char state = 0;
  uint64_t start = 0;
  if (!ReadProcStat(pid, &state, &start)) return Liveness::kUnknown;  // no /proc here: trust kill()
  // A killed process stays a zombie until its parent reaps it; it will never release anything again.
  if (state == 'Z' || state == 'X' || state == 'x') return Liveness::kDead;
  if (recordedStartTime != 0 && start != recordedStartTime) return Liveness::kDead;  // the pid was reused
  return Liveness::kAlive;
}

}  // namespace bulwark

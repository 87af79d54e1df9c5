#include <libproc.h>
#include <sys/proc.h>
#include <sys/proc_info.h>
#include <sys/types.h>

#include <cerrno>
#include <csignal>

#include "core/platform/process.h"

namespace bulwark {

namespace {

// The process's BSD info (start time, status); false when it cannot be read (gone, or not ours to read).
bool ReadBsdInfo(ProcessId pid, proc_bsdinfo* out) {
  return proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, out, sizeof *out) == static_cast<int>(sizeof *out);
}

}  // namespace

uint64_t ProcessStartTime(ProcessId pid) {
  proc_bsdinfo info;
  if (!ReadBsdInfo(pid, &info)) return 0;
  return static_cast<uint64_t>(info.pbi_start_tvsec) * 1000000ull + static_cast<uint64_t>(info.pbi_start_tvusec);
}

uint64_t PidNamespaceId() { return 0; }  // macOS has no pid namespaces

Liveness ProcessLiveness(ProcessId pid, uint64_t recordedStartTime) {
  if (pid <= 0) return Liveness::kDead;
  if (kill(pid, 0) != 0 && errno == ESRCH) return Liveness::kDead;
  proc_bsdinfo info;
  if (!ReadBsdInfo(pid, &info)) return Liveness::kUnknown;
  // A killed process stays a zombie until its parent reaps it; it will never release anything again.
  if (info.pbi_status == SZOMB) return Liveness::kDead;
  uint64_t start =
      static_cast<uint64_t>(info.pbi_start_tvsec) * 1000000ull + static_cast<uint64_t>(info.pbi_start_tvusec);
  if (recordedStartTime != 0 && start != recordedStartTime) return Liveness::kDead;  // the pid was reused
  return Liveness::kAlive;
}

}  // namespace bulwark

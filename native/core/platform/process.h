// Who a process is and whether it still runs, beyond its pid: pids are reused, so a member slot also records the
// process's start time, and on Linux its pid namespace (a process in another namespace cannot be judged by its pid,
// which means nothing here). Identity and liveness by OS: /proc on Linux, proc_pidinfo on macOS, process handles on
// Windows.
#pragma once
#include <cstdint>
#include <string>

namespace bulwark {

using ProcessId = int32_t;

ProcessId CurrentProcessId();

// The effective user: geteuid() on POSIX systems, the relative id (RID) of the process's user on Windows. Part of
// every region's name (native/core/region/region_names.h).
uint32_t EffectiveUserId();
// "uid 1001 (alice)" or "uid 1001", for messages.
std::string DescribeUser(int64_t uid);

// When `pid` started, in the system's own unit (clock ticks since boot, µs since the epoch, FILETIME); 0 when unknown.
// Only compared for equality.
uint64_t ProcessStartTime(ProcessId pid);

// Inode of this process's pid namespace (/proc/self/ns/pid); 0 where there are none or it is unknown.
uint64_t PidNamespaceId();

enum class Liveness { kAlive, kDead, kUnknown };
// kDead only when the process certainly does not exist any more (or its pid now belongs to another process).
Liveness ProcessLiveness(ProcessId pid, uint64_t recordedStartTime);
// The cheap half of ProcessLiveness, for checks every sampler tick: true only when no process has that pid now (one
// system call; a zombie or a reused pid is not seen).
bool ProcessGone(ProcessId pid);

}  // namespace bulwark

// Who a process is, beyond its pid: pids are reused, so a member slot also records the process start time, and
// the pid namespace (a process in another namespace cannot be judged dead just because its pid is not visible here).
#pragma once
#include <sys/types.h>
#include <cstdint>

namespace bulwark {

// Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat); 0 when unknown.
uint64_t ProcessStartTime(pid_t pid);
// Inode of /proc/self/ns/pid; 0 when unknown.
uint64_t PidNamespaceId();

enum class Liveness { kAlive, kDead, kUnknown };
// kDead only when the process certainly does not exist any more (or its pid now belongs to another process).
Liveness ProcessLiveness(pid_t pid, uint64_t recordedStartTime);

}  // namespace bulwark

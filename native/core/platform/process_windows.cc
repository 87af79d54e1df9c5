#include <windows.h>

#include <cstdio>
#include <cstring>

#include "core/platform/process.h"

namespace bulwark {

namespace {

uint64_t CreationTime(HANDLE process) {
  FILETIME created, exited, kernel, user;
  if (!GetProcessTimes(process, &created, &exited, &kernel, &user)) return 0;
  return (static_cast<uint64_t>(created.dwHighDateTime) << 32) | created.dwLowDateTime;
}

}  // namespace

ProcessId CurrentProcessId() { return static_cast<ProcessId>(GetCurrentProcessId()); }

uint32_t EffectiveUserId() {
  static const uint32_t rid = [] {
    uint32_t out = 0;
    HANDLE token = nullptr;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return out;
    union {
      TOKEN_USER user;
      char bytes[256];
    } info;
    DWORD size = 0;
    if (GetTokenInformation(token, TokenUser, &info, sizeof info, &size) && IsValidSid(info.user.User.Sid)) {
      UCHAR count = *GetSidSubAuthorityCount(info.user.User.Sid);
      if (count > 0) out = *GetSidSubAuthority(info.user.User.Sid, count - 1);
    }
    CloseHandle(token);
    return out;
  }();
  return rid;
}

std::string DescribeUser(int64_t uid) {
  char text[48];
  std::snprintf(text, sizeof text, "user id %lld", static_cast<long long>(uid));
  return text;
}

uint64_t ProcessStartTime(ProcessId pid) {
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid));
  if (process == nullptr) return 0;
  uint64_t start = CreationTime(process);
  CloseHandle(process);
  return start;
}

uint64_t PidNamespaceId() { return 0; }  // Windows has no pid namespaces

Liveness ProcessLiveness(ProcessId pid, uint64_t recordedStartTime) {
  if (pid <= 0) return Liveness::kDead;
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, static_cast<DWORD>(pid));
  if (process == nullptr) {
    // No such process; any other refusal (access denied) says nothing about whether it runs.
    return GetLastError() == ERROR_INVALID_PARAMETER ? Liveness::kDead : Liveness::kUnknown;
  }
  // A process object outlives its process while handles to it remain: signalled means it has exited.
  bool exited = WaitForSingleObject(process, 0) == WAIT_OBJECT_0;
  uint64_t start = CreationTime(process);
  CloseHandle(process);
  if (exited) return Liveness::kDead;
  if (recordedStartTime != 0 && start != 0 && start != recordedStartTime) return Liveness::kDead;  // pid reused
  return Liveness::kAlive;
}

bool ProcessGone(ProcessId pid) {
  HANDLE process = OpenProcess(SYNCHRONIZE, FALSE, static_cast<DWORD>(pid));
  if (process == nullptr) return GetLastError() == ERROR_INVALID_PARAMETER;
  bool exited = WaitForSingleObject(process, 0) == WAIT_OBJECT_0;
  CloseHandle(process);
  return exited;
}

}  // namespace bulwark

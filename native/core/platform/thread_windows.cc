#include <windows.h>

#include "core/platform/thread.h"

namespace bulwark {

namespace {

DWORD WINAPI Entry(void* self) {
  NativeThread::RunOn(self);
  return 0;
}

}  // namespace

bool NativeThread::Start(void (*run)(void*), void* arg) {
  run_ = run;
  arg_ = arg;
  HANDLE thread = CreateThread(nullptr, 0, Entry, this, 0, nullptr);
  if (thread == nullptr) return false;
  handle_ = reinterpret_cast<uintptr_t>(thread);
  return true;
}

void NativeThread::Join() {
  HANDLE thread = reinterpret_cast<HANDLE>(handle_);
  WaitForSingleObject(thread, INFINITE);
  CloseHandle(thread);
}

void OnProcessExit(void (*)()) {}

void NameCurrentThread(const char* name) {
  // SetThreadDescription exists from Windows 10 1607: looked up, not linked, so older systems still load the addon.
  using SetDescription = HRESULT(WINAPI*)(HANDLE, PCWSTR);
  auto set = reinterpret_cast<SetDescription>(
      reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "SetThreadDescription")));
  if (set == nullptr) return;
  wchar_t wide[64];
  int n = MultiByteToWideChar(CP_UTF8, 0, name, -1, wide, 64);
  if (n > 0) set(GetCurrentThread(), wide);
}

void SleepMs(int ms) { Sleep(static_cast<DWORD>(ms)); }

}  // namespace bulwark

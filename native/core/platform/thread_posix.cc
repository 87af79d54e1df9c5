#include <pthread.h>
#include <time.h>

#include <cstdlib>
#include <cstring>

#include "core/platform/thread.h"

namespace bulwark {

static_assert(sizeof(pthread_t) <= sizeof(uintptr_t), "pthread_t fits a handle");

bool NativeThread::Start(void (*run)(void*), void* arg) {
  run_ = run;
  arg_ = arg;
  pthread_t thread;
  auto entry = [](void* self) -> void* {
    RunOn(self);
    return nullptr;
  };
  if (pthread_create(&thread, nullptr, entry, this) != 0) return false;
  handle_ = 0;
  std::memcpy(&handle_, &thread, sizeof thread);
  return true;
}

void NativeThread::Join() {
  pthread_t thread;
  std::memcpy(&thread, &handle_, sizeof thread);
  pthread_join(thread, nullptr);
}

void OnProcessExit(void (*fn)()) { std::atexit(fn); }

void NameCurrentThread(const char* name) {
#ifdef __APPLE__
  pthread_setname_np(name);  // macOS names only the calling thread
#else
  pthread_setname_np(pthread_self(), name);
#endif
}

void SleepMs(int ms) {
  timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace bulwark

// A native background thread that never takes the process down: starting one may fail (the caller then runs
// without it), joining is explicit. pthreads on POSIX systems, CreateThread on Windows; std::thread is not used
// because its constructor aborts on failure in a build without exceptions.
#pragma once
#include <cstdint>

namespace bulwark {

class NativeThread {
 public:
  // Runs run(arg) on a new thread; false when the system refused one.
  bool Start(void (*run)(void*), void* arg);
  // Waits for the thread started last to return.
  void Join();
  // The new thread's entry: runs what Start was given. `self` is the NativeThread.
  static void RunOn(void* self) { static_cast<NativeThread*>(self)->run_(static_cast<NativeThread*>(self)->arg_); }

 private:
  void (*run_)(void*) = nullptr;
  void* arg_ = nullptr;
  uintptr_t handle_ = 0;
};

// Runs `fn` at process exit while the process's other threads still run (std::atexit on POSIX systems). On Windows
// it registers nothing: a DLL's exit handlers run after ExitProcess has terminated every other thread, possibly
// inside a lock, so joining or locking there could hang the exit; other processes reap what this one held instead.
void OnProcessExit(void (*fn)());

// Names the calling thread where the system shows thread names (top -H, debuggers); best effort.
void NameCurrentThread(const char* name);

void SleepMs(int ms);

}  // namespace bulwark

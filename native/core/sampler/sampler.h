// The background sampler: one thread per process, however many JavaScript threads load the addon.
//
// It writes every signal into one block of process memory (the "signals block") that each JavaScript thread
// views through a Float64Array, so reading a signal is one load and never crosses into C++:
// - container CPU (permille, EMA), sampled every cpuInterval;
// - for each registered event loop: utilization (ELU, permille, EMA), queueing delay (ms: how long the loop has
//   gone without returning to poll, raw and EMA) and a coarse clock, every loopInterval;
// - every 200 ms (kLeaseRenewMs) it renews the leases of the shared regions this process has open and reaps their
//   dead members.
//
// The thread never touches V8 or a loop directly: the binding registers each loop with an idle-time callback
// (libuv's uv_metrics_idle_time, which is safe to call from another thread) and unregisters it, under the
// sampler's lock, before the loop goes away.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "core/cpu/cgroup_cpu.h"
#include "core/platform/thread.h"

namespace bulwark {

namespace signals_layout {
// Process section (byte offsets into the signals block).
constexpr size_t kCpuEma = 0;         // f64 permille
constexpr size_t kCpuRaw = 8;         // f64 permille, last sample
constexpr size_t kCores = 16;         // f64 effective cores
constexpr size_t kSource = 24;        // f64 CpuSourceKind
constexpr size_t kCpuSamples = 32;    // f64 count of CPU samples
constexpr size_t kLoopTicks = 40;     // f64 count of loop ticks
constexpr size_t kReaped = 48;        // f64 dead members reaped so far
constexpr size_t kRunning = 56;       // f64 1 while the thread runs
constexpr size_t kCpuInterval = 64;   // f64 ms
constexpr size_t kLoopInterval = 72;  // f64 ms
constexpr size_t kCpuDecay = 80;      // f64
constexpr size_t kLoopDecay = 88;     // f64
constexpr size_t kProcessNow = 96;    // f64 monotonic ms at the last tick
constexpr size_t kLoopSlots = 256;
constexpr size_t kLoopSlotSize = 128;
constexpr size_t kMaxLoops = 1024;
// Loop slot fields.
constexpr size_t kLoopNow = 0;        // f64 coarse monotonic ms: advanced at each poll entry/exit and each tick
constexpr size_t kLoopElu = 8;        // f64 permille, EMA
constexpr size_t kLoopDelay = 16;     // f64 ms, EMA
constexpr size_t kLoopDelayRaw = 24;  // f64 ms, last tick
constexpr size_t kLoopEluRaw = 32;    // f64 permille, last tick
constexpr size_t kLoopActive = 40;    // f64 1 while registered
constexpr size_t kLoopTickAt = 48;    // f64 monotonic ms of the last tick that measured this loop
// f64 ms: the shortest busy stretch of the last tick (the ongoing one if none completed). CoDel's signal: a queue
// is standing only if even the best moment of an interval was over target.
constexpr size_t kLoopDelayMin = 56;
// f64 monotonic ms when the loop last entered poll, written on the loop's own thread: a new value means a new loop
// turn, so JavaScript can tell how long the current turn has run (the queueing-delay rule's turn age).
constexpr size_t kLoopPollAt = 64;
constexpr size_t kSize = kLoopSlots + kMaxLoops * kLoopSlotSize;
}  // namespace signals_layout

// The sampler's settings. Their defaults live in TypeScript (lib/foundation/native/sampler-defaults.ts), which starts
// the sampler with them; the core only bounds what it is given (docs/rules/signals.md).
struct SamplerOptions {
  double cpuIntervalMs = 0;
  double loopIntervalMs = 0;
  double cpuDecay = 0;
  double loopDecay = 0;
  // While every loop is nearly idle the loop tick stretches by this factor: wakeups are the sampler's main cost
  // (tens of microseconds each on a virtual machine), and an idle loop has nothing to report.
  double idleStretch = 0;
};

using IdleTimeFn = uint64_t (*)(void* ctx);  // cumulative idle ns of a loop

inline double NsToMs(double ns) { return ns / 1e6; }

// Pure EMA step, exposed for tests: value * decay + sample * (1 - decay).
inline double EmaStep(double value, double sample, double decay) { return value * decay + sample * (1 - decay); }

class Sampler {
 public:
  static Sampler& Instance();

  uint8_t* block() { return block_; }

  // Loops. RegisterLoop returns the slot, or -1 when every slot is taken.
  int RegisterLoop(IdleTimeFn idle, void* ctx, uint64_t nowNs, uint64_t idleNs);
  void UnregisterLoop(int slot);
  // Called on the loop's own thread: just before it blocks in poll, and just after poll returns.
  void OnPollEnter(int slot, uint64_t nowNs, uint64_t idleNs);
  void OnPollExit(int slot, uint64_t nowNs);

  // Environments that use the sampler; the thread runs while there is at least one. `defaults` configure the
  // sampler if nothing has configured it yet.
  void Acquire(const SamplerOptions& defaults);
  void Release();
  // Stops and joins the thread whatever the count, for good (process exit).
  void Shutdown();

  // Bounds every setting (an interval of 0 would spin, a decay of 1 or more would diverge); NaN keeps the current
  // value.
  void Configure(const SamplerOptions& options);
  SamplerOptions options();
  // Replaces the CPU reader (cgroup root for tests, or "/" again). Takes effect before the next CPU tick.
  void SetCgroupRoot(const std::string& root);
  CpuSourceInfo cpuInfo();

 private:
  Sampler();
  static void RunThread(void* self);
  void Run();
  void ConfigureLocked(const SamplerOptions& options);
  // Stops the running thread and joins it outside the lock; `lock` holds mutex_ before and after.
  void StopAndJoinLocked(std::unique_lock<std::mutex>& lock);
  // Returns true when some loop is busy enough to deserve the short interval.
  bool TickLoops(uint64_t nowNs);
  void TickCpu(uint64_t nowNs);

  // No member initializers: zeroed memory is an unused slot, and RegisterLoop sets every field of the slot it
  // takes. A constructor that wrote all kMaxLoops slots (with the signals block, 230 KB) made each process that
  // loads the addon fault in and keep 57 pages of memory it may never use (Instance() builds the sampler in static
  // storage, which starts zeroed and costs nothing until written).
  struct LoopState {
    bool used;
    IdleTimeFn idle;
    void* ctx;
    // Written on the loop thread; read by the sampler through the seqlock.
    uint32_t seq;
    uint64_t entryNs;
    uint64_t entryIdleNs;
    double maxBusyMs;  // longest completed busy stretch since the last tick (CAS max / exchange)
    double minBusyMs;  // shortest completed busy stretch since the last tick (CAS min / exchange; kNoStretch)
    // Loop-thread private.
    uint64_t prevEntryNs;
    uint64_t prevEntryIdleNs;
    // Sampler private.
    bool primed;
    uint64_t tickNs;
    uint64_t tickIdleNs;
  };

  alignas(64) uint8_t block_[signals_layout::kSize];
  LoopState loops_[signals_layout::kMaxLoops];
  // The thread's lifecycle: kStopped -> kRunning (Acquire starts it) -> kStopping (the last Release, or Shutdown,
  // asks it to stop and joins it outside the lock) -> kStopped. While it is kStopping, Acquire and Shutdown wait for
  // the join to end: a second thread started meanwhile would clear the first one's stop request, and that join would
  // never return.
  enum class ThreadState { kStopped, kRunning, kStopping };

  std::mutex mutex_;                      // guards loops_ registration, options, reader, and the thread's lifecycle
  std::condition_variable wake_;          // wakes the thread early (stop, new options)
  std::condition_variable stateChanged_;  // a join has ended
  NativeThread thread_;
  ThreadState state_ = ThreadState::kStopped;
  bool stop_ = false;      // the running thread's stop request; cleared only when no thread is left
  bool shutDown_ = false;  // process exit: no thread starts again
  int users_ = 0;
  bool configured_ = false;
  SamplerOptions options_;
  CgroupCpuReader* reader_ = nullptr;
};

}  // namespace bulwark

#include "core/sampler/sampler.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>

#include "core/platform/clock.h"
#include "core/platform/thread.h"
#include "core/region/region_layout.h"
#include "core/region/shared_region.h"
#include "core/util/raw_atomic.h"

namespace bulwark {

namespace {

using namespace signals_layout;

// Moves a schedule one step on; one that fell behind (the machine was suspended) restarts from now, without a burst.
void Advance(uint64_t* next, uint64_t step, uint64_t now) {
  *next += step;
  if (*next <= now) *next = now + step;
}

// The latest tick of a grid (gridNext, the grid's next tick after now, plus whole steps) that is not later than
// wanted, or wanted itself when the grid has none by then. Waking costs the thread 30-50 us of CPU on a VM, far more
// than an idle tick's work: an idle loop tick taken a little early on the lease's grid shares its wakeup.
uint64_t ShareWakeup(uint64_t wanted, uint64_t gridNext, uint64_t gridStep) {
  if (gridNext > wanted || gridStep == 0) return wanted;
  return gridNext + (wanted - gridNext) / gridStep * gridStep;
}

}  // namespace

Sampler& Sampler::Instance() {
  // Built in static storage and never destroyed: it must outlive static destructors, which run after atexit
  // handlers, and no allocation can fail. The storage starts zeroed (the signals block and every loop slot rely on
  // it: the constructor writes neither, so their pages stay untouched until used).
  alignas(Sampler) static unsigned char storage[sizeof(Sampler)];
  static Sampler* s = new (storage) Sampler();
  return *s;
}

Sampler::Sampler() {
  StoreF64(block_ + kCores, 1);
  StoreF64(block_ + kCpuInterval, options_.cpuIntervalMs);
  StoreF64(block_ + kLoopInterval, options_.loopIntervalMs);
  StoreF64(block_ + kCpuDecay, options_.cpuDecay);
  StoreF64(block_ + kLoopDecay, options_.loopDecay);
  StoreF64(block_ + kProcessNow, MonotonicMs());
}

void Sampler::Acquire(const SamplerOptions& defaults) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!configured_) ConfigureLocked(defaults);
  users_++;
  stateChanged_.wait(lock, [this] { return state_ != ThreadState::kStopping; });
  if (state_ == ThreadState::kRunning || shutDown_) return;
  stop_ = false;
  // A thread the system refuses only means no background signals (they keep their last values).
  bool started = thread_.Start(&Sampler::RunThread, this);
  state_ = started ? ThreadState::kRunning : ThreadState::kStopped;
}

void Sampler::RunThread(void* self) { static_cast<Sampler*>(self)->Run(); }

void Sampler::Release() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (users_ > 0) users_--;
  if (users_ == 0 && state_ == ThreadState::kRunning) StopAndJoinLocked(lock);
}

void Sampler::Shutdown() {
  std::unique_lock<std::mutex> lock(mutex_);
  shutDown_ = true;
  stateChanged_.wait(lock, [this] { return state_ != ThreadState::kStopping; });
  if (state_ == ThreadState::kRunning) StopAndJoinLocked(lock);
}

void Sampler::StopAndJoinLocked(std::unique_lock<std::mutex>& lock) {
  state_ = ThreadState::kStopping;
  stop_ = true;
  wake_.notify_all();
  lock.unlock();  // the thread needs the lock to see stop_ and leave
  thread_.Join();
  lock.lock();
  state_ = ThreadState::kStopped;
  stateChanged_.notify_all();
}

namespace {

// TypeScript validates these; the core still refuses to spin (an interval of 0) or to diverge (a decay outside
// [0, 1)), whoever calls it. NaN keeps the current value.
double Bound(double requested, double current, double lo, double hi) {
  double v = requested == requested ? requested : current;
  return v < lo ? lo : (v > hi ? hi : v);
}

}  // namespace

void Sampler::Configure(const SamplerOptions& requested) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    ConfigureLocked(requested);
  }
  wake_.notify_all();
}

void Sampler::ConfigureLocked(const SamplerOptions& requested) {
  options_.cpuIntervalMs = Bound(requested.cpuIntervalMs, options_.cpuIntervalMs, 1, 3.6e6);
  options_.loopIntervalMs = Bound(requested.loopIntervalMs, options_.loopIntervalMs, 1, 3.6e6);
  options_.cpuDecay = Bound(requested.cpuDecay, options_.cpuDecay, 0, 0.9999);
  options_.loopDecay = Bound(requested.loopDecay, options_.loopDecay, 0, 0.9999);
  options_.idleStretch = Bound(requested.idleStretch, options_.idleStretch, 1, 100);
  configured_ = true;
  StoreF64(block_ + kCpuInterval, options_.cpuIntervalMs);
  StoreF64(block_ + kLoopInterval, options_.loopIntervalMs);
  StoreF64(block_ + kCpuDecay, options_.cpuDecay);
  StoreF64(block_ + kLoopDecay, options_.loopDecay);
}

SamplerOptions Sampler::options() {
  std::lock_guard<std::mutex> guard(mutex_);
  return options_;
}

void Sampler::OpenReadersLocked(const std::string& root, bool replace) {
  if (reader_ != nullptr && !replace) return;
  delete reader_;
  delete memoryReader_;
  reader_ = new CgroupCpuReader(root.empty() ? "/" : root);
  memoryReader_ = new CgroupMemoryReader(root.empty() ? "/" : root);
  StoreF64(block_ + kSource, static_cast<double>(reader_->info().kind));
  StoreF64(block_ + kCores, reader_->info().cores);
  double primed = 0;
  reader_->Sample(MonotonicNs(), &primed);
  TickMemory();
}

void Sampler::SetCgroupRoot(const std::string& root) {
  std::lock_guard<std::mutex> guard(mutex_);
  OpenReadersLocked(root, true);
  StoreF64(block_ + kCpuEma, 0);
  StoreF64(block_ + kCpuRaw, 0);
}

CpuSourceInfo Sampler::cpuInfo() {
  std::lock_guard<std::mutex> guard(mutex_);
  OpenReadersLocked("/", false);
  return reader_->info();
}

MemorySourceInfo Sampler::memoryInfo() {
  std::lock_guard<std::mutex> guard(mutex_);
  OpenReadersLocked("/", false);
  return memoryReader_->info();
}

void Sampler::Run() {
  NameCurrentThread("bulwark-sampler");  // findable in /proc/<pid>/task/*/comm and in top -H
  cpuInfo();                             // detect the CPU and memory sources and prime them off the JavaScript thread
  StoreF64(block_ + kRunning, 1);
  uint64_t now = MonotonicNs();
  uint64_t nextLoop = now;
  uint64_t nextCpu = now + static_cast<uint64_t>(options().cpuIntervalMs * 1e6);
  // Leases keep their own fixed cadence, whatever the intervals: other processes judge ours by it. When every loop
  // idles, its ticks move onto the lease's grid (both every 200 ms by default) and share their wakeups.
  const uint64_t leaseStep = static_cast<uint64_t>(layout::kLeaseRenewMs * 1e6);
  uint64_t nextLease = now;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    uint64_t next = std::min(nextLoop, std::min(nextCpu, nextLease));
    now = MonotonicNs();
    if (now < next) {
      wake_.wait_for(lock, std::chrono::nanoseconds(next - now));
      continue;  // re-check stop_ and the clock (options may have changed the schedule)
    }
    uint64_t loopStep = static_cast<uint64_t>(options_.loopIntervalMs * 1e6);
    StoreF64(block_ + kProcessNow, NsToMs(static_cast<double>(now)));
    bool loopsIdle = false;
    if (now >= nextLoop) {
      loopsIdle = !TickLoops(now);
      Advance(&nextLoop, loopsIdle ? static_cast<uint64_t>(loopStep * options_.idleStretch) : loopStep, now);
    }
    if (now >= nextCpu) {
      TickCpu(now);
      Advance(&nextCpu, static_cast<uint64_t>(options_.cpuIntervalMs * 1e6), now);
    }
    if (now >= nextLease) {
      Advance(&nextLease, leaseStep, now);
      lock.unlock();  // renewing and reaping take region locks: never hold ours meanwhile
      int reaped = RegionRegistry::Instance().MaintainAll();
      if (reaped > 0) StoreF64(block_ + kReaped, LoadF64(block_ + kReaped) + reaped);
      lock.lock();
    }
    if (loopsIdle) nextLoop = ShareWakeup(nextLoop, nextLease, leaseStep);
  }
  StoreF64(block_ + kRunning, 0);
}

void Sampler::TickCpu(uint64_t nowNs) {
  if (reader_ == nullptr) return;
  double raw = 0;
  if (reader_->Sample(nowNs, &raw)) {
    StoreF64(block_ + kCpuRaw, raw);
    StoreF64(block_ + kCpuEma, EmaStep(LoadF64(block_ + kCpuEma), raw, options_.cpuDecay));
    StoreF64(block_ + kCpuSamples, LoadF64(block_ + kCpuSamples) + 1);
  }
  StoreF64(block_ + kSource, static_cast<double>(reader_->info().kind));
  StoreF64(block_ + kCores, reader_->info().cores);
  TickMemory();
}

void Sampler::TickMemory() {
  if (memoryReader_ == nullptr) return;
  MemorySample sample;
  bool known = memoryReader_->Sample(&sample);
  StoreF64(block_ + kResident, sample.resident);
  if (!known) return;  // the last known figures stay
  // The source of the figures: the cgroup's when its limit binds, else the host's.
  MemorySourceKind source = sample.limited ? memoryReader_->info().kind : MemorySourceKind::kHost;
  StoreF64(block_ + kMemorySource, static_cast<double>(source));
  double usage = sample.limit > 0 ? sample.used / sample.limit * 1000 : 0;
  StoreF64(block_ + kMemoryUsage, usage > 1000 ? 1000 : usage);
  StoreF64(block_ + kMemoryUsed, sample.used);
  StoreF64(block_ + kMemoryLimit, sample.limit);
  StoreF64(block_ + kMemorySamples, LoadF64(block_ + kMemorySamples) + 1);
}

}  // namespace bulwark

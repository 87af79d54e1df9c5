#include "core/sampler/sampler.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/platform/clock.h"
#include "core/region/shared_region.h"
#include "core/util/raw_atomic.h"

namespace bulwark {

namespace {

using namespace signals_layout;

uint8_t* Slot(uint8_t* block, int slot) { return block + kLoopSlots + size_t(slot) * kLoopSlotSize; }

double NsToMs(double ns) { return ns / 1e6; }

// A loop above either mark is sampled at the full rate.
constexpr double kBusyUtil = 150;  // permille
constexpr double kBusyDelayMs = 5;

}  // namespace

Sampler& Sampler::Instance() {
  // Leaked on purpose: it must outlive static destructors, which run after atexit handlers.
  static Sampler* s = new Sampler();
  return *s;
}

Sampler::Sampler() {
  block_ = static_cast<uint8_t*>(std::aligned_alloc(64, kSize));
  std::memset(block_, 0, kSize);
  loops_ = new LoopState[kMaxLoops];
  StoreF64(block_ + kCores, 1);
  StoreF64(block_ + kCpuInterval, options_.cpuIntervalMs);
  StoreF64(block_ + kLoopInterval, options_.loopIntervalMs);
  StoreF64(block_ + kCpuDecay, options_.cpuDecay);
  StoreF64(block_ + kLoopDecay, options_.loopDecay);
  StoreF64(block_ + kProcessNow, MonotonicMs());
}

int Sampler::RegisterLoop(IdleTimeFn idle, void* ctx, uint64_t nowNs, uint64_t idleNs) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (size_t i = 0; i < kMaxLoops; i++) {
    LoopState& l = loops_[i];
    if (l.used) continue;
    l = LoopState();
    l.used = true;
    l.idle = idle;
    l.ctx = ctx;
    l.entryNs = l.prevEntryNs = nowNs;
    l.entryIdleNs = l.prevEntryIdleNs = idleNs;
    uint8_t* s = Slot(block_, static_cast<int>(i));
    std::memset(s, 0, kLoopSlotSize);
    StoreF64(s + kLoopNow, NsToMs(static_cast<double>(nowNs)));
    StoreF64(s + kLoopActive, 1);
    return static_cast<int>(i);
  }
  return -1;
}

void Sampler::UnregisterLoop(int slot) {
  if (slot < 0 || slot >= static_cast<int>(kMaxLoops)) return;
  std::lock_guard<std::mutex> guard(mutex_);
  loops_[slot].used = false;
  loops_[slot].idle = nullptr;
  loops_[slot].ctx = nullptr;
  StoreF64(Slot(block_, slot) + kLoopActive, 0);
}

void Sampler::OnPollEnter(int slot, uint64_t nowNs, uint64_t idleNs) {
  LoopState& l = loops_[slot];
  // The stretch since the previous poll entry, minus the time spent blocked in poll, was spent running callbacks:
  // a request that arrived during it waited up to that long.
  double busyMs = NsToMs(static_cast<double>(nowNs - l.prevEntryNs) - static_cast<double>(idleNs - l.prevEntryIdleNs));
  if (busyMs < 0) busyMs = 0;
  MaxF64(&l.maxBusyMs, busyMs);
  MinF64(&l.minBusyMs, busyMs);
  l.prevEntryNs = nowNs;
  l.prevEntryIdleNs = idleNs;
  // Seqlock: odd while the pair is being written.
  __atomic_add_fetch(&l.seq, 1, __ATOMIC_ACQ_REL);
  __atomic_store_n(&l.entryNs, nowNs, __ATOMIC_RELAXED);
  __atomic_store_n(&l.entryIdleNs, idleNs, __ATOMIC_RELAXED);
  __atomic_add_fetch(&l.seq, 1, __ATOMIC_ACQ_REL);
  MaxF64(Slot(block_, slot) + kLoopNow, NsToMs(static_cast<double>(nowNs)));
}

void Sampler::OnPollExit(int slot, uint64_t nowNs) {
  MaxF64(Slot(block_, slot) + kLoopNow, NsToMs(static_cast<double>(nowNs)));
}

void Sampler::Acquire(const SamplerOptions& defaults) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!configured_) ConfigureLocked(defaults);
  users_++;
  stateChanged_.wait(lock, [this] { return state_ != ThreadState::kStopping; });
  if (state_ == ThreadState::kRunning || shutDown_) return;
  stop_ = false;
  // pthread rather than std::thread: a failed std::thread constructor aborts in a build without exceptions,
  // while a failed pthread_create only means no background signals (they keep their last values).
  bool started = pthread_create(&thread_, nullptr, &Sampler::RunThread, this) == 0;
  state_ = started ? ThreadState::kRunning : ThreadState::kStopped;
}

void* Sampler::RunThread(void* self) {
  static_cast<Sampler*>(self)->Run();
  return nullptr;
}

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
  pthread_t thread = thread_;
  wake_.notify_all();
  lock.unlock();  // the thread needs the lock to see stop_ and leave
  pthread_join(thread, nullptr);
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

void Sampler::SetCgroupRoot(const std::string& root) {
  std::lock_guard<std::mutex> guard(mutex_);
  delete reader_;
  reader_ = new CgroupCpuReader(root.empty() ? "/" : root);
  StoreF64(block_ + kSource, static_cast<double>(reader_->info().kind));
  StoreF64(block_ + kCores, reader_->info().cores);
  StoreF64(block_ + kCpuEma, 0);
  StoreF64(block_ + kCpuRaw, 0);
  double primed = 0;
  reader_->Sample(MonotonicNs(), &primed);
}

CpuSourceInfo Sampler::cpuInfo() {
  std::lock_guard<std::mutex> guard(mutex_);
  if (reader_ == nullptr) {
    reader_ = new CgroupCpuReader("/");
    StoreF64(block_ + kSource, static_cast<double>(reader_->info().kind));
    StoreF64(block_ + kCores, reader_->info().cores);
    double primed = 0;
    reader_->Sample(MonotonicNs(), &primed);
  }
  return reader_->info();
}

void Sampler::Run() {
#ifdef __linux__
  pthread_setname_np(pthread_self(), "bulwark-sampler");  // findable in /proc/<pid>/task/*/comm and in top -H
#endif
  cpuInfo();  // detect the CPU source and prime it off the JavaScript thread
  StoreF64(block_ + kRunning, 1);
  uint64_t now = MonotonicNs();
  uint64_t nextLoop = now;
  uint64_t nextCpu = now + static_cast<uint64_t>(options().cpuIntervalMs * 1e6);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    uint64_t next = nextLoop < nextCpu ? nextLoop : nextCpu;
    now = MonotonicNs();
    if (now < next) {
      wake_.wait_for(lock, std::chrono::nanoseconds(next - now));
      continue;  // re-check stop_ and the clock (options may have changed the schedule)
    }
    uint64_t loopStep = static_cast<uint64_t>(options_.loopIntervalMs * 1e6);
    uint64_t cpuStep = static_cast<uint64_t>(options_.cpuIntervalMs * 1e6);
    StoreF64(block_ + kProcessNow, NsToMs(static_cast<double>(now)));
    if (now >= nextLoop) {
      bool busy = TickLoops(now);
      uint64_t step = busy ? loopStep : static_cast<uint64_t>(loopStep * options_.idleStretch);
      nextLoop += step;
      if (nextLoop <= now) nextLoop = now + step;  // fell behind (suspended): do not burst
    }
    if (now >= nextCpu) {
      TickCpu(now);
      nextCpu += cpuStep;
      if (nextCpu <= now) nextCpu = now + cpuStep;
      lock.unlock();  // reaping takes region locks: never hold ours meanwhile
      int reaped = RegionRegistry::Instance().ReapAll();
      if (reaped > 0) StoreF64(block_ + kReaped, LoadF64(block_ + kReaped) + reaped);
      lock.lock();
    }
  }
  StoreF64(block_ + kRunning, 0);
}

bool Sampler::TickLoops(uint64_t nowNs) {
  double decay = options_.loopDecay;
  bool busy = false;
  for (size_t i = 0; i < kMaxLoops; i++) {
    LoopState& l = loops_[i];
    if (!l.used) continue;
    uint8_t* s = Slot(block_, static_cast<int>(i));
    uint64_t idle = l.idle(l.ctx);
    uint64_t entryNs = 0, entryIdle = 0;
    for (int tries = 0; tries < 16; tries++) {
      uint32_t a = __atomic_load_n(&l.seq, __ATOMIC_ACQUIRE);
      entryNs = __atomic_load_n(&l.entryNs, __ATOMIC_RELAXED);
      entryIdle = __atomic_load_n(&l.entryIdleNs, __ATOMIC_RELAXED);
      uint32_t b = __atomic_load_n(&l.seq, __ATOMIC_ACQUIRE);
      if (a == b && (a & 1) == 0) break;
    }
    // Busy time since the loop last entered poll: that is how long a request arriving now has already waited.
    double ongoing = 0;
    if (nowNs > entryNs && idle >= entryIdle)
      ongoing = NsToMs(static_cast<double>(nowNs - entryNs) - static_cast<double>(idle - entryIdle));
    if (ongoing < 0) ongoing = 0;
    double completed = ExchangeF64(&l.maxBusyMs, 0);
    double shortest = ExchangeF64(&l.minBusyMs, 1e300);
    double delayRaw = completed > ongoing ? completed : ongoing;
    // The best moment of the tick: its shortest completed stretch, or the ongoing one if shorter (an idle loop
    // reads 0) or if none completed (one long stretch).
    double delayMin = shortest < ongoing ? shortest : ongoing;
    MaxF64(s + kLoopNow, NsToMs(static_cast<double>(nowNs)));
    if (!l.primed) {
      busy = true;
      l.primed = true;
      l.tickNs = nowNs;
      l.tickIdleNs = idle;
      continue;
    }
    double dt = static_cast<double>(nowNs - l.tickNs);
    double didle = idle >= l.tickIdleNs ? static_cast<double>(idle - l.tickIdleNs) : 0;
    l.tickNs = nowNs;
    l.tickIdleNs = idle;
    if (dt <= 0) continue;
    double util = 1000.0 * (1.0 - didle / dt);
    if (util < 0) util = 0;
    if (util > 1000) util = 1000;
    StoreF64(s + kLoopEluRaw, util);
    StoreF64(s + kLoopElu, EmaStep(LoadF64(s + kLoopElu), util, decay));
    StoreF64(s + kLoopDelayRaw, delayRaw);
    StoreF64(s + kLoopDelayMin, delayMin);
    StoreF64(s + kLoopDelay, EmaStep(LoadF64(s + kLoopDelay), delayRaw, decay));
    StoreF64(s + kLoopTickAt, NsToMs(static_cast<double>(nowNs)));
    if (util > kBusyUtil || delayRaw > kBusyDelayMs) busy = true;
  }
  StoreF64(block_ + kLoopTicks, LoadF64(block_ + kLoopTicks) + 1);
  return busy;
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
}

}  // namespace bulwark

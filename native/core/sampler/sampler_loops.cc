// The sampler's event loops: registering them, the hooks each loop's thread calls around poll, and the loop tick
// that turns those into utilization, queueing delay and the coarse clock (sampler.h).
#include <cstring>

#include "core/platform/clock.h"
#include "core/sampler/sampler.h"
#include "core/util/raw_atomic.h"

namespace bulwark {

namespace {

using namespace signals_layout;

uint8_t* Slot(uint8_t* block, int slot) { return block + kLoopSlots + size_t(slot) * kLoopSlotSize; }

// A loop above either mark is sampled at the full rate.
constexpr double kBusyUtil = 150;  // permille
constexpr double kBusyDelayMs = 5;

// A loop's shortest busy stretch before any has completed since the last tick (above every real one).
constexpr double kNoStretch = 1e300;

}  // namespace

int Sampler::RegisterLoop(IdleTimeFn idle, void* ctx, uint64_t nowNs, uint64_t idleNs) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (size_t i = 0; i < kMaxLoops; i++) {
    LoopState& l = loops_[i];
    if (l.used) continue;
    l = LoopState();
    l.minBusyMs = kNoStretch;
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
  uint8_t* s = Slot(block_, slot);
  StoreF64(s + kLoopPollAt, NsToMs(static_cast<double>(nowNs)));
  MaxF64(s + kLoopNow, NsToMs(static_cast<double>(nowNs)));
}

void Sampler::OnPollExit(int slot, uint64_t nowNs) {
  MaxF64(Slot(block_, slot) + kLoopNow, NsToMs(static_cast<double>(nowNs)));
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
    double shortest = ExchangeF64(&l.minBusyMs, kNoStretch);
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

}  // namespace bulwark

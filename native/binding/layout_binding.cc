// Exposes the byte layouts of native/core to JavaScript, so TypeScript never repeats an offset.
#include <napi.h>

#include "binding/env_data.h"
#include "core/hotkeys/heavy_keeper_front.h"
#include "core/keyed/keyed_layout.h"
#include "core/region/lane_window.h"
#include "core/region/region_layout.h"
#include "core/sampler/sampler.h"
#include "core/util/raw_atomic.h"

namespace bulwark {
namespace binding {

void InitLayout(Napi::Env env, Napi::Object exports) {
  Napi::Object region = Napi::Object::New(env);
  auto set = [&](Napi::Object o, const char* k, double v) { o.Set(k, Napi::Number::New(env, v)); };
  set(region, "magic", layout::kMagic);
  set(region, "version", layout::kVersion);
  set(region, "versionOffset", layout::kVersionOffset);
  set(region, "totalSize", layout::kTotalSizeOffset);
  set(region, "state", layout::kStateOffset);
  set(region, "generation", layout::kGenerationOffset);
  set(region, "memberCapacity", layout::kMemberCapacityOffset);
  set(region, "memberHighWater", layout::kMemberHighWaterOffset);
  set(region, "payloadOffset", layout::kPayloadOffsetOffset);
  set(region, "createdAt", layout::kCreatedAtOffset);
  set(region, "attachCount", layout::kAttachCountOffset);
  set(region, "kind", layout::kKindOffset);
  set(region, "kindSize", layout::kKindSize);
  set(region, "fingerprint", layout::kFingerprintOffset);
  set(region, "fingerprintSize", layout::kFingerprintSize);
  set(region, "headerSize", layout::kHeaderSize);
  set(region, "memberSlotSize", layout::kMemberSlotSize);
  set(region, "memberPid", layout::kMemberPidOffset);
  set(region, "memberThread", layout::kMemberThreadOffset);
  set(region, "maxMemberCapacity", layout::kMaxMemberCapacity);
  set(region, "maxReclaim", layout::kMaxReclaim);

  Napi::Object window = Napi::Object::New(env);
  set(window, "bucketSize", window_layout::kBucketSize);
  set(window, "tag", window_layout::kTagOffset);
  set(window, "count", window_layout::kCountOffset);
  set(window, "sum", window_layout::kSumOffset);

  namespace sl = signals_layout;
  Napi::Object signals = Napi::Object::New(env);
  set(signals, "cpuEma", sl::kCpuEma);
  set(signals, "cpuRaw", sl::kCpuRaw);
  set(signals, "cores", sl::kCores);
  set(signals, "source", sl::kSource);
  set(signals, "cpuSamples", sl::kCpuSamples);
  set(signals, "loopTicks", sl::kLoopTicks);
  set(signals, "reaped", sl::kReaped);
  set(signals, "running", sl::kRunning);
  set(signals, "cpuInterval", sl::kCpuInterval);
  set(signals, "loopInterval", sl::kLoopInterval);
  set(signals, "cpuDecay", sl::kCpuDecay);
  set(signals, "loopDecay", sl::kLoopDecay);
  set(signals, "processNow", sl::kProcessNow);
  set(signals, "memoryUsage", sl::kMemoryUsage);
  set(signals, "memoryUsed", sl::kMemoryUsed);
  set(signals, "memoryLimit", sl::kMemoryLimit);
  set(signals, "resident", sl::kResident);
  set(signals, "memorySource", sl::kMemorySource);
  set(signals, "memorySamples", sl::kMemorySamples);
  set(signals, "loopSlots", sl::kLoopSlots);
  set(signals, "loopSlotSize", sl::kLoopSlotSize);
  set(signals, "maxLoops", sl::kMaxLoops);
  set(signals, "loopNow", sl::kLoopNow);
  set(signals, "loopElu", sl::kLoopElu);
  set(signals, "loopDelay", sl::kLoopDelay);
  set(signals, "loopDelayRaw", sl::kLoopDelayRaw);
  set(signals, "loopEluRaw", sl::kLoopEluRaw);
  set(signals, "loopActive", sl::kLoopActive);
  set(signals, "loopTickAt", sl::kLoopTickAt);
  set(signals, "loopDelayMin", sl::kLoopDelayMin);
  set(signals, "loopPollAt", sl::kLoopPollAt);
  set(signals, "size", sl::kSize);

  namespace kl = keyed_layout;
  Napi::Object keyed = Napi::Object::New(env);
  set(keyed, "slotSize", kl::kSlotSize);
  set(keyed, "tagWord", kl::kTagWord);
  set(keyed, "checkWord", kl::kCheckWord);
  set(keyed, "stateWord", kl::kStateWord);
  set(keyed, "epochWord", kl::kEpochWord);
  set(keyed, "slotWords", kl::kSlotWords);
  set(keyed, "bucketSlots", kl::kBucketSlots);
  set(keyed, "slotsPerKey", kl::kSlotsPerKey);
  set(keyed, "maxBuckets", kl::kMaxBuckets);
  set(keyed, "maxKeys", kl::kMaxKeys);
  set(keyed, "ruleHeadroom", kl::kRuleHeadroom);
  set(keyed, "maxTicksPerMs", kl::kMaxTicksPerMs);
  set(keyed, "maxTau", kl::kMaxTau);
  set(keyed, "maxDebt", kl::kMaxDebt);
  set(keyed, "epochShift", kl::kEpochShift);
  set(keyed, "freshEpochs", kl::kFreshEpochs);
  set(keyed, "epochSkew", kl::kEpochSkew);
  set(keyed, "returning", kl::kReturning);
  set(keyed, "countBits", kl::kCountBits);
  set(keyed, "rescans", kl::kRescans);
  set(keyed, "claimSpins", kl::kClaimSpins);
  set(keyed, "claimBreakMs", kl::kClaimBreakMs);
  set(keyed, "protocolVersion", kl::kProtocolVersion);
  set(keyed, "casTries", kCasTries);
  set(keyed, "heavyEntries", kl::kHeavyEntries);
  set(keyed, "heavyEntrySize", kl::kHeavyEntrySize);
  set(keyed, "heavyWords", kl::kHeavyWords);
  set(keyed, "heavyTextUnits", kl::kHeavyTextUnits);
  using Front = HeavyKeeperFront;
  Napi::Object front = Napi::Object::New(env);
  set(front, "dirtyCountWord", Front::kDirtyCountWord);
  set(front, "seenWord", Front::kSeenWord);
  set(front, "lastSlotWord", Front::kLastSlotWord);
  set(front, "lastFingerprintWord", Front::kLastFingerprintWord);
  set(front, "lastEstimateWord", Front::kLastEstimateWord);
  set(front, "entriesOffsetWord", Front::kEntriesOffsetWord);
  set(front, "pendingTotalOffset", Front::kPendingTotalOffset);
  set(front, "thresholdOffset", Front::kThresholdOffset);
  set(front, "randomOffset", Front::kRandomOffset);
  set(front, "decayOffset", Front::kDecayOffset);
  set(front, "decayTableSize", kDecayTableSize);
  set(front, "headerSize", Front::kHeaderSize);
  set(front, "entryAlign", Front::kEntryAlign);
  set(front, "entryWords", Front::kEntryWords);
  set(front, "entryEpoch", Front::kEntryEpoch);
  set(front, "entryLearned", Front::kEntryLearned);
  set(front, "entryFingerprint", Front::kEntryFingerprint);
  set(front, "entryBuckets", Front::kEntryBuckets);
  set(front, "entryPending", Front::kEntryPending);
  set(front, "entryRows", Front::kEntryRows);

  Napi::Object layoutObj = Napi::Object::New(env);
  layoutObj.Set("region", region);
  layoutObj.Set("window", window);
  layoutObj.Set("signals", signals);
  layoutObj.Set("keyed", keyed);
  layoutObj.Set("heavyKeeperFront", front);
  exports.Set("layout", layoutObj);
}

}  // namespace binding
}  // namespace bulwark

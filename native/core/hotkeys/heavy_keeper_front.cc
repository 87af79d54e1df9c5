#include "core/hotkeys/heavy_keeper_front.h"

namespace bulwark {

namespace {
size_t Words8(uint32_t n) { return (size_t(n) * 4 + 7) / 8 * 8; }  // n u32, rounded up to 8 bytes
}  // namespace

size_t HeavyKeeperFront::Size(uint32_t k, uint32_t depth) {
  return kHeaderSize + Words8(depth) + Words8(k) + (kEntryAlign - 8) + size_t(k) * kEntryWords * 4;
}

HeavyKeeperFront::HeavyKeeperFront(uint8_t* memory, uint32_t k, uint32_t depth) : k_(k), depth_(depth) {
  if (memory == nullptr) return;
  header_ = reinterpret_cast<uint32_t*>(memory);
  pendingTotal_ = reinterpret_cast<double*>(memory + kPendingTotalOffset);
  threshold_ = reinterpret_cast<double*>(memory + kThresholdOffset);
  *threshold_ = -1;
  random_ = reinterpret_cast<uint64_t*>(memory + kRandomOffset);
  decay_ = reinterpret_cast<double*>(memory + kDecayOffset);
  lastBuckets_ = reinterpret_cast<uint32_t*>(memory + kHeaderSize);
  dirtyList_ = reinterpret_cast<uint32_t*>(memory + kHeaderSize + Words8(depth));
  // The memory is 8-byte aligned: at most kEntryAlign - 8 bytes to the next line.
  const uintptr_t after = reinterpret_cast<uintptr_t>(dirtyList_) + Words8(k);
  const size_t offset = (after + kEntryAlign - 1) / kEntryAlign * kEntryAlign - reinterpret_cast<uintptr_t>(memory);
  header_[kEntriesOffsetWord] = static_cast<uint32_t>(offset);
  entries_ = reinterpret_cast<uint32_t*>(memory + offset);
}

void HeavyKeeperFront::SetSeen(uint32_t generation) {
  if (header_ != nullptr) header_[kSeenWord] = generation;
}

void HeavyKeeperFront::Report(int32_t slot, uint32_t fingerprint, uint32_t count, const uint32_t* buckets) {
  if (header_ == nullptr) return;
  header_[kLastSlotWord] = slot < 0 ? kNoSlot : static_cast<uint32_t>(slot);
  header_[kLastFingerprintWord] = fingerprint;
  header_[kLastEstimateWord] = count;
  for (uint32_t row = 0; row < depth_; row++) lastBuckets_[row] = buckets[row];
}

void HeavyKeeperFront::SetThreshold(double threshold) {
  if (header_ != nullptr) *threshold_ = threshold;
}

void HeavyKeeperFront::SetDecay(const double* lookup) {
  if (header_ == nullptr) return;
  for (int i = 0; i < kDecayTableSize; i++) decay_[i] = lookup[i];
}

void HeavyKeeperFront::Moved(int32_t slot) {
  if (header_ != nullptr && slot >= 0 && static_cast<uint32_t>(slot) < k_) entries_[slot * kEntryWords + kEntryEpoch]++;
}

}  // namespace bulwark

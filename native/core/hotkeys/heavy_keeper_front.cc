#include "core/hotkeys/heavy_keeper_front.h"

namespace bulwark {

namespace {
size_t RowsSize(uint32_t depth) { return (size_t(depth) * 4 + 7) / 8 * 8; }
}  // namespace

size_t HeavyKeeperFront::Size(uint32_t k, uint32_t depth) { return kHeaderSize + RowsSize(depth) + size_t(k) * 12; }

HeavyKeeperFront::HeavyKeeperFront(uint8_t* memory, uint32_t k, uint32_t depth) : k_(k), depth_(depth) {
  if (memory == nullptr) return;
  header_ = reinterpret_cast<uint32_t*>(memory);
  pendingTotal_ = reinterpret_cast<double*>(memory + 24);
  threshold_ = reinterpret_cast<double*>(memory + 32);
  *threshold_ = -1;
  lastBuckets_ = reinterpret_cast<uint32_t*>(memory + kHeaderSize);
  epochs_ = reinterpret_cast<uint32_t*>(memory + kHeaderSize + RowsSize(depth));
  dirtyList_ = epochs_ + k;
  pending_ = dirtyList_ + k;
}

void HeavyKeeperFront::SetSeen(uint32_t generation) {
  if (header_ != nullptr) header_[1] = generation;
}

void HeavyKeeperFront::Report(int32_t slot, uint32_t fingerprint, uint32_t count, const uint32_t* buckets) {
  if (header_ == nullptr) return;
  header_[2] = slot < 0 ? kNoSlot : static_cast<uint32_t>(slot);
  header_[3] = fingerprint;
  header_[4] = count;
  for (uint32_t row = 0; row < depth_; row++) lastBuckets_[row] = buckets[row];
}

void HeavyKeeperFront::SetThreshold(double threshold) {
  if (header_ != nullptr) *threshold_ = threshold;
}

void HeavyKeeperFront::Moved(int32_t slot) {
  if (header_ != nullptr && slot >= 0 && static_cast<uint32_t>(slot) < k_) epochs_[slot]++;
}

}  // namespace bulwark

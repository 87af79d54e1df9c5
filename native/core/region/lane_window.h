// A rolling window laid out in shared memory as one lane per member (docs/rules/rolling-window.md).
//
// Every attachment writes only its own lane, so adds need no atomic read-modify-write and never contend on a
// cache line; a reader merges the lanes bucket by bucket. Each bucket carries a tag naming the epoch (bucket
// number since the window's start) it holds, so rotation is lazy: a writer that finds a stale tag clears the
// bucket and retags it, and a reader ignores buckets whose tag is not the epoch it wants. A reader that races a
// rotation sees the tag change (it is read before and after the bucket) and counts that bucket as empty.
//
// The same layout is written by lib/foundation/regions/rolling-window.ts; keep the two in step.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/util/raw_atomic.h"

namespace bulwark {

struct WindowShape {
  double startMs;  // bucket boundaries are anchored here (the window's creation time)
  double bucketMs;
  uint32_t size;        // buckets
  uint32_t laneStride;  // bytes between lanes
};

namespace window_layout {
constexpr size_t kBucketSize = 24;
constexpr size_t kTagOffset = 0;    // i32: epoch % 0x7fffffff + 1, 0 = empty or being cleared
constexpr size_t kCountOffset = 8;  // f64
constexpr size_t kSumOffset = 16;   // f64
inline uint32_t LaneStride(uint32_t size) { return static_cast<uint32_t>((size * kBucketSize + 63) / 64 * 64); }
}  // namespace window_layout

inline int64_t WindowEpoch(const WindowShape& s, double nowMs) {
  double e = std::floor((nowMs - s.startMs) / s.bucketMs);
  return e > 0 ? static_cast<int64_t>(e) : 0;
}
inline int32_t WindowTag(int64_t epoch) { return static_cast<int32_t>(epoch % 0x7fffffff) + 1; }

struct BucketValue {
  double count;
  double sum;
};

class LaneWindow {
 public:
  LaneWindow(uint8_t* base, const WindowShape& shape) : base_(base), shape_(shape) {}

  void Add(uint32_t lane, double nowMs, double value) {
    int64_t epoch = WindowEpoch(shape_, nowMs);
    uint8_t* b = Bucket(lane, epoch);
    int32_t tag = WindowTag(epoch);
    if (LoadI32(b + window_layout::kTagOffset) != tag) {
      StoreI32(b + window_layout::kTagOffset, 0);
      StoreF64(b + window_layout::kCountOffset, 0);
      StoreF64(b + window_layout::kSumOffset, 0);
      StoreI32(b + window_layout::kTagOffset, tag);
    }
    StoreF64(b + window_layout::kCountOffset, LoadF64(b + window_layout::kCountOffset) + 1);
    StoreF64(b + window_layout::kSumOffset, LoadF64(b + window_layout::kSumOffset) + value);
  }

  // Sum of one epoch over lanes [0, lanes).
  BucketValue Read(uint32_t lanes, int64_t epoch) const {
    BucketValue v{0, 0};
    int32_t tag = WindowTag(epoch);
    for (uint32_t lane = 0; lane < lanes; lane++) {
      const uint8_t* b = Bucket(lane, epoch);
      if (LoadI32(b + window_layout::kTagOffset) != tag) continue;
      double count = LoadF64(b + window_layout::kCountOffset);
      double sum = LoadF64(b + window_layout::kSumOffset);
      if (LoadI32(b + window_layout::kTagOffset) != tag) continue;
      v.count += count;
      v.sum += sum;
    }
    return v;
  }

  // Totals over the live buckets at `nowMs` (all `size` epochs ending at the current one).
  BucketValue Total(uint32_t lanes, double nowMs) const {
    BucketValue t{0, 0};
    int64_t current = WindowEpoch(shape_, nowMs);
    for (int64_t e = current - shape_.size + 1; e <= current; e++) {
      if (e < 0) continue;
      BucketValue v = Read(lanes, e);
      t.count += v.count;
      t.sum += v.sum;
    }
    return t;
  }

 private:
  uint8_t* Bucket(uint32_t lane, int64_t epoch) const {
    return base_ + size_t(lane) * shape_.laneStride + size_t(epoch % shape_.size) * window_layout::kBucketSize;
  }
  uint8_t* base_;
  WindowShape shape_;
};

}  // namespace bulwark

#include "core/hotkeys/top_k_heap.h"

#include <algorithm>
#include <cstring>

namespace bulwark {

int CompareKeys(const std::string& a, const std::string& b) {
  size_t n = std::min(a.size(), b.size());
  int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

TopKHeap::TopKHeap(uint32_t k) : k_(k) {
  size_t capacity = 16;
  while (capacity < size_t(k) * 2) capacity <<= 1;
  index_.assign(capacity, -1);
  indexMask_ = capacity - 1;
  heap_.reserve(k);
}

bool TopKHeap::Less(int32_t a, int32_t b) const {
  const TopKEntry& x = entries_[a];
  const TopKEntry& y = entries_[b];
  if (x.count != y.count) return x.count < y.count;
  return CompareKeys(x.key, y.key) > 0;
}

int32_t TopKHeap::Find(const uint8_t* key, size_t length, uint32_t hash) const {
  for (size_t i = IndexHome(hash);; i = (i + 1) & indexMask_) {
    int32_t slot = index_[i];
    if (slot < 0) return -1;
    const TopKEntry& e = entries_[slot];
    if (e.hash == hash && e.key.size() == length && (length == 0 || std::memcmp(e.key.data(), key, length) == 0))
      return slot;
  }
}

bool TopKHeap::Raise(int32_t slot, uint64_t count) {
  TopKEntry& e = entries_[slot];
  if (count <= e.count) return false;
  e.count = count;
  SiftDown(static_cast<size_t>(e.heapPos));  // a larger count moves away from the root
  return true;
}

int32_t TopKHeap::Insert(const uint8_t* key, size_t length, uint32_t hash, uint64_t count, bool binary, bool truncated,
                         ExpelledKey* expelled, bool* didExpel) {
  *didExpel = false;
  int32_t slot;
  if (full()) {
    slot = heap_[0];
    TopKEntry& old = entries_[slot];
    IndexErase(slot);
    expelled->key.swap(old.key);
    expelled->count = old.count;
    expelled->binary = old.binary;
    expelled->truncated = old.truncated;
    *didExpel = true;
  } else if (!freeSlots_.empty()) {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
  } else {
    slot = static_cast<int32_t>(entries_.size());
    entries_.emplace_back();
  }
  TopKEntry& e = entries_[slot];
  e.key.assign(reinterpret_cast<const char*>(key), length);
  e.hash = hash;
  e.count = count;
  e.binary = binary;
  e.truncated = truncated;
  IndexInsert(slot);
  if (*didExpel) {
    SiftDown(0);  // the slot already sits at the root
  } else {
    heap_.push_back(slot);
    e.heapPos = static_cast<int32_t>(heap_.size() - 1);
    SiftUp(heap_.size() - 1);
  }
  return slot;
}

void TopKHeap::Halve(uint32_t shift, std::vector<ExpelledKey>* removed, std::vector<int32_t>* freedSlots) {
  if (shift == 0) return;
  std::vector<int32_t> kept;
  kept.reserve(heap_.size());
  for (int32_t slot : heap_) {
    TopKEntry& e = entries_[slot];
    uint64_t halved = shift >= 64 ? 0 : e.count >> shift;
    if (halved > 0) {
      e.count = halved;
      kept.push_back(slot);
      continue;
    }
    removed->push_back(ExpelledKey{std::move(e.key), e.count, e.binary, e.truncated});
    e.key.clear();
    IndexErase(slot);  // the index compares keys by hash first, so erase before forgetting the hash
    e.count = 0;
    e.heapPos = -1;
    freeSlots_.push_back(slot);
    freedSlots->push_back(slot);
  }
  // Halving keeps counts in order but can make two equal, and equal counts order by key: heapify again.
  heap_.swap(kept);
  for (size_t i = 0; i < heap_.size(); i++) entries_[heap_[i]].heapPos = static_cast<int32_t>(i);
  for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
}

std::vector<int32_t> TopKHeap::Sorted() const {
  std::vector<int32_t> out(heap_);
  std::sort(out.begin(), out.end(), [this](int32_t a, int32_t b) { return Less(b, a); });
  return out;
}

void TopKHeap::Place(size_t pos, int32_t slot) {
  heap_[pos] = slot;
  entries_[slot].heapPos = static_cast<int32_t>(pos);
}

void TopKHeap::SiftUp(size_t pos) {
  int32_t slot = heap_[pos];
  while (pos > 0) {
    size_t parent = (pos - 1) / 2;
    if (!Less(slot, heap_[parent])) break;
    Place(pos, heap_[parent]);
    pos = parent;
  }
  Place(pos, slot);
}

void TopKHeap::SiftDown(size_t pos) {
  int32_t slot = heap_[pos];
  const size_t n = heap_.size();
  for (;;) {
    size_t child = pos * 2 + 1;
    if (child >= n) break;
    if (child + 1 < n && Less(heap_[child + 1], heap_[child])) child++;
    if (!Less(heap_[child], slot)) break;
    Place(pos, heap_[child]);
    pos = child;
  }
  Place(pos, slot);
}

void TopKHeap::IndexInsert(int32_t slot) {
  size_t i = IndexHome(entries_[slot].hash);
  while (index_[i] >= 0) i = (i + 1) & indexMask_;
  index_[i] = slot;
}

// Backward-shift deletion: no tombstones, so look-ups stay short however many keys come and go.
void TopKHeap::IndexErase(int32_t slot) {
  size_t i = IndexHome(entries_[slot].hash);
  while (index_[i] != slot) i = (i + 1) & indexMask_;
  for (size_t j = i;;) {
    j = (j + 1) & indexMask_;
    if (index_[j] < 0) break;
    size_t home = IndexHome(entries_[index_[j]].hash);
    // Move j's entry into the hole at i unless its home lies cyclically in (i, j].
    bool homeBetween = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!homeBetween) {
      index_[i] = index_[j];
      i = j;
    }
  }
  index_[i] = -1;
}

}  // namespace bulwark

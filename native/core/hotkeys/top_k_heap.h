// The top-k candidates: a min-heap by count (ties: the larger key is the smaller element, as in the reference,
// so listing is count descending, key ascending) with an index from key to entry for O(1) look-up.
//
// Entries live in a pool of at most k slots and keep their slot for as long as they stay in the heap; the heap
// orders slot numbers. The slot number is what HeavyKeeper publishes a key under in shared memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bulwark {

struct TopKEntry {
  std::string key;    // the key's bytes (UTF-8 for string keys), or its identity when long (key_identity.h)
  uint32_t hash = 0;  // murmur3 seed 0: the fingerprint, also the index hash
  uint64_t count = 0;
  bool binary = false;     // first added as a Uint8Array (listed back as bytes)
  bool truncated = false;  // `key` is a long key's identity
  int32_t heapPos = -1;    // -1: slot free
};

// A key that left the heap, with the count it had.
struct ExpelledKey {
  std::string key;
  uint64_t count;
  bool binary;
  bool truncated;
};

class TopKHeap {
 public:
  explicit TopKHeap(uint32_t k);

  uint32_t k() const { return k_; }
  size_t size() const { return heap_.size(); }
  bool full() const { return heap_.size() >= k_; }
  // Slots ever used: slot numbers are below this.
  uint32_t slotHighWater() const { return static_cast<uint32_t>(entries_.size()); }
  const TopKEntry& entry(int32_t slot) const { return entries_[slot]; }
  // The heap's minimum (the next to be expelled); only when size() > 0.
  const TopKEntry& min() const { return entries_[heap_[0]]; }

  int32_t Find(const uint8_t* key, size_t length, uint32_t hash) const;
  // Raises a slot's count to `count` if that is higher; returns whether it changed.
  bool Raise(int32_t slot, uint64_t count);
  // Inserts a key that is not in the heap. When full, the minimum is moved into *expelled and its slot reused.
  int32_t Insert(const uint8_t* key, size_t length, uint32_t hash, uint64_t count, bool binary, bool truncated,
                 ExpelledKey* expelled, bool* didExpel);
  // Shifts every count right by `shift` bits; keys left at 0 are removed (appended to *removed with the count
  // they had) and their slots appended to *freedSlots. Restores heap order afterwards.
  void Halve(uint32_t shift, std::vector<ExpelledKey>* removed, std::vector<int32_t>* freedSlots);
  // Slots in the heap, in listing order (count descending, key ascending).
  std::vector<int32_t> Sorted() const;
  // a < b in heap order.
  bool Less(int32_t a, int32_t b) const;

 private:
  void SiftUp(size_t pos);
  void SiftDown(size_t pos);
  void Place(size_t pos, int32_t slot);
  void IndexInsert(int32_t slot);
  void IndexErase(int32_t slot);
  size_t IndexHome(uint32_t hash) const { return hash & indexMask_; }

  uint32_t k_;
  std::vector<TopKEntry> entries_;
  std::vector<int32_t> heap_;
  std::vector<int32_t> freeSlots_;
  std::vector<int32_t> index_;  // open addressing, linear probing, -1 = empty
  size_t indexMask_;
};

// Byte order of keys (Go's string order): memcmp, then the shorter first.
int CompareKeys(const std::string& a, const std::string& b);

}  // namespace bulwark

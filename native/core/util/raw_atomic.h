// Atomic access to cells of shared memory that JavaScript also reads and writes through typed arrays.
// The memory is plain bytes (an mmap'd region or an ArrayBuffer), so we use the GCC/Clang __atomic builtins on
// naturally aligned cells rather than std::atomic objects, which could not be placed over memory we do not own.
#pragma once
#include <cstdint>
#include <cstring>

namespace bulwark {

inline int32_t LoadI32(const void* p) { return __atomic_load_n(static_cast<const int32_t*>(p), __ATOMIC_SEQ_CST); }
inline void StoreI32(void* p, int32_t v) { __atomic_store_n(static_cast<int32_t*>(p), v, __ATOMIC_SEQ_CST); }
inline int32_t AddI32(void* p, int32_t v) { return __atomic_add_fetch(static_cast<int32_t*>(p), v, __ATOMIC_SEQ_CST); }
inline bool CasI32(void* p, int32_t expected, int32_t desired) {
  return __atomic_compare_exchange_n(static_cast<int32_t*>(p), &expected, desired, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST);
}

// Doubles are stored as their 64-bit pattern so that a single aligned 8-byte load or store moves them whole,
// which is what a JavaScript Float64Array read of the same cell does on every 64-bit platform we build for.
inline double LoadF64(const void* p) {
  uint64_t bits = __atomic_load_n(static_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE);
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
inline void StoreF64(void* p, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  __atomic_store_n(static_cast<uint64_t*>(p), bits, __ATOMIC_RELEASE);
}
// Every wait on shared memory is bounded (docs/guide/trust.md): a compare-and-swap loop gives up after this many
// lost races. Losing 64 in a row takes a writer that changes the word between every load and swap: another member
// gone wrong, or a hostile same-user process; honest contention loses one or two.
constexpr int kCasTries = 64;

// Moves a word of shared memory from `current` to `next` by compare-and-swap, where `step(current, &next)` computes
// next and returns false to leave the word as it is. A lost race reloads the word and steps again, at most
// kCasTries times. Returns false when every try lost (the word is then left to whoever keeps writing it; each call
// site documents what it answers then), true otherwise.
template <typename T, typename Step>
inline bool CasUpdate(T* word, Step step) {
  T current = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (int tries = 0; tries < kCasTries; tries++) {
    T next;
    if (!step(current, &next)) return true;
    if (__atomic_compare_exchange_n(word, &current, next, true, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return true;
  }
  return false;
}

// Replace a cell's value with v when better(v, current), atomically. Used for clocks several writers advance and
// for the longest / shortest busy stretch of a tick. Returns false when the bound was reached: the cell then keeps
// what the other writers put there (a clock they are advancing, a stretch they are recording).
template <typename Better>
inline bool ReplaceF64If(void* p, double v, Better better) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return CasUpdate(static_cast<uint64_t*>(p), [&](uint64_t current, uint64_t* next) {
    double currentValue;
    std::memcpy(&currentValue, &current, sizeof currentValue);
    *next = bits;
    return better(v, currentValue);
  });
}
inline bool MaxF64(void* p, double v) {
  return ReplaceF64If(p, v, [](double a, double b) { return a > b; });
}
inline bool MinF64(void* p, double v) {
  return ReplaceF64If(p, v, [](double a, double b) { return a < b; });
}

// Replace a cell with v and return what it held.
inline double ExchangeF64(void* p, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  uint64_t old = __atomic_exchange_n(static_cast<uint64_t*>(p), bits, __ATOMIC_ACQ_REL);
  double out;
  std::memcpy(&out, &old, sizeof out);
  return out;
}

}  // namespace bulwark

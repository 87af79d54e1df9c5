// Byte layout of a keyed table (docs/rules/keyed-table.md): every key of a collection in one block of fixed-size
// slots, found by a keyed fingerprint of the key. TypeScript reads these constants from the addon (binding
// `layout.keyed`) and runs the hot path on typed-array views of the block; keyed_table.h is the same protocol in
// C++ (the harnesses and the test natives use it to prove that both sides agree on one layout).
//
// A slot is four 32-bit words:
//   tag    0: empty; > 0: the tag of the key that owns the slot (its fingerprint's first word, bit 31 cleared,
//          never 0); < 0: claimed, being written (the claim mark: bit 31 set, the low 31 bits the claim's start,
//          ms since the table's origin, so that a claim and its start are one word)
//   check  the owner's second fingerprint word (a claim leaves it alone until it publishes the new key)
//   state  a rate slot: the theoretical arrival time (GCRA) in ticks, wrapping at 2^32; a count slot: requests in
//          flight (low kCountBits bits) and a version that every change moves on (the bits above)
//   epoch  the tick epoch (ticks >> kEpochShift, wrapping, shifted left by one) in which the state was last written;
//          its low bit (kReturning) is set once the owner came back after its first request
// Slots come in buckets of kBucketSlots (128 bytes); a key lives in its home bucket or in its alternate one.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bulwark {
namespace keyed_layout {

constexpr size_t kSlotSize = 16;
constexpr size_t kTagWord = 0;
constexpr size_t kCheckWord = 1;
constexpr size_t kStateWord = 2;
constexpr size_t kEpochWord = 3;
constexpr uint32_t kSlotWords = 4;

constexpr uint32_t kBucketSlots = 8;
// Slots per key of maxKeys: half of the slots are in use when the table holds maxKeys keys, which two buckets of
// eight per key keep almost free of overflow (docs/rules/keyed-table.md, "Sizing").
constexpr uint32_t kSlotsPerKey = 2;
// Home buckets are mapped with a 32 x 21-bit product, exact in a double: at most 2^21 buckets (8 388 608 keys).
constexpr uint32_t kMaxBuckets = 1u << 21;
constexpr uint32_t kMaxKeys = kMaxBuckets * kBucketSlots / kSlotsPerKey;

// Time: a rate slot counts ticks, as fine as the table's rule allows: a burst's span (burst / rate) is kMaxTau /
// kRuleHeadroom ticks at the rule the table was made with, so that a live rule may widen it kRuleHeadroom times, and
// a tick is at least 1 / kMaxTicksPerMs ms (ticks since the origin stay exact in a double for a year).
constexpr int32_t kMaxTau = 1 << 29;
constexpr uint32_t kRuleHeadroom = 64;
constexpr double kMaxTicksPerMs = 262144;
// A decoded debt above this is no state any member wrote (garbage, or a wrapped stale value): the slot is at rest.
constexpr int32_t kMaxDebt = 1 << 30;
// A state written kFreshEpochs epochs ago or more is stale: its debt ran out long ago (kFreshEpochs << kEpochShift
// ticks is kMaxTau), and its 32-bit arrival time may have wrapped, so it reads as at rest whatever it says.
constexpr int kEpochShift = 24;
constexpr int32_t kFreshEpochs = 32;
// Members read their clocks at different moments: an epoch up to this far ahead of the reader's is still fresh.
constexpr int32_t kEpochSkew = 2;
// The epoch word's low bit: the owner made more than one request. A returning key at rest keeps its slot for one
// burst's span more than a key seen once (docs/rules/keyed-table.md, "Who gives a slot up").
constexpr int32_t kReturning = 1;

// Count slots: requests in flight in the low bits, the version above.
constexpr int kCountBits = 20;
constexpr int32_t kCountMask = (1 << kCountBits) - 1;
constexpr uint32_t kCountVersion = 1u << kCountBits;

// Bounds on every loop over shared words (docs/guide/trust.md): lookups and claims restarted (enough to break every
// abandoned claim of a key's two buckets and still look a few times), re-reads of a claimed slot before giving up on
// it, and the age (ms) after which a claim is taken for abandoned and broken.
constexpr int kRescans = 2 * kBucketSlots + 4;
constexpr int kClaimSpins = 256;
constexpr int32_t kClaimBreakMs = 1000;
// The version of the slots' protocol, in every keyed table's region fingerprint: members of builds that claim slots
// differently refuse to share a region. 2: the claim mark carries the claim's start (before: the claimant's tag).
constexpr int32_t kProtocolVersion = 2;

// The heaviest keys: a small direct-mapped list with their text, for `bulwark top` and the metrics' topKeys.
// Entry: tag, check, count, length (UTF-16 units of the whole key), then its first kHeavyTextUnits units.
constexpr uint32_t kHeavyEntries = 32;
constexpr size_t kHeavyEntrySize = 64;
constexpr uint32_t kHeavyWords = 4;
constexpr uint32_t kHeavyTextUnits = 24;

inline uint32_t BucketsFor(uint32_t maxKeys) {
  uint64_t slots = uint64_t(maxKeys) * kSlotsPerKey;
  uint64_t buckets = (slots + kBucketSlots - 1) / kBucketSlots;
  return buckets < 1 ? 1 : buckets > kMaxBuckets ? kMaxBuckets : static_cast<uint32_t>(buckets);
}
inline size_t BlockBytes(uint32_t buckets) { return size_t(buckets) * kBucketSlots * kSlotSize; }

}  // namespace keyed_layout
}  // namespace bulwark

#include "core/keyed/keyed_table.h"

#include <climits>

#include "core/util/raw_atomic.h"

namespace bulwark {

namespace kl = keyed_layout;

namespace {

inline int32_t Wrap(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
inline int32_t Minus(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
// A claim's mark: bit 31 set, the low 31 bits its start (ms), so that a waiter never reads a claim without its time.
inline int32_t ClaimMark(int32_t ms) { return ms | INT32_MIN; }
// Ms since the claim `mark` started, in 31-bit wrap-around.
inline int32_t ClaimAge(int32_t nowMs, int32_t mark) {
  return static_cast<int32_t>((static_cast<uint32_t>(nowMs) - static_cast<uint32_t>(mark)) << 1) >> 1;
}

}  // namespace

int32_t KeyedTable::LoadAt(const int32_t* p) const { return shared_ ? LoadI32(p) : *p; }

void KeyedTable::StoreAt(int32_t* p, int32_t v) {
  if (shared_) {
    StoreI32(p, v);
  } else {
    *p = v;
  }
}

bool KeyedTable::CasAt(int32_t* p, int32_t expected, int32_t desired) {
  if (shared_) return CasI32(p, expected, desired);
  if (*p != expected) return false;
  *p = desired;
  return true;
}

int64_t KeyedTable::FindOrClaimed(const KeyPlace& place, int64_t* claimed) const {
  *claimed = -1;
  for (int pass = 0; pass < 2; pass++) {
    uint32_t bucket = pass == 0 ? place.home : place.alt;
    if (pass == 1 && bucket == place.home) break;
    for (uint32_t s = 0; s < kl::kBucketSlots; s++) {
      int64_t i = Word(bucket, s);
      int32_t tag = Load(i + kl::kTagWord);
      if (tag == place.tag && Load(i + kl::kCheckWord) == place.check) return i;
      if (tag < 0 && *claimed < 0) *claimed = i;
    }
  }
  return -1;
}

int64_t KeyedTable::Find(const KeyPlace& place) const {
  int64_t claimed;
  return FindOrClaimed(place, &claimed);
}

// The first empty slot of the bucket, else the slot at rest the longest (a stale one first), else -1.
int64_t KeyedTable::PickIn(uint32_t bucket, const RateStep& step) const {
  int64_t best = -1;
  int64_t bestRest = -1;
  for (uint32_t s = 0; s < kl::kBucketSlots; s++) {
    int64_t i = Word(bucket, s);
    int32_t tag = Load(i + kl::kTagWord);
    if (tag == 0) return i;
    if (tag < 0) continue;
    int32_t tat = Load(i + kl::kStateWord);
    int32_t written = Load(i + kl::kEpochWord);
    if (RateDebt(tat, written, step.now, step.epoch) != 0) continue;
    int32_t age = EpochAge(written, step.epoch);
    int32_t ahead = Minus(tat, step.now);
    bool stale = age >= kl::kFreshEpochs || age < -kl::kEpochSkew || ahead > 0;
    int64_t rest = stale ? INT64_MAX : -int64_t(ahead);
    // A returning key keeps its slot for one burst's span after it came to rest.
    if ((written & kl::kReturning) != 0 && rest < step.tau) continue;
    if (rest > bestRest) {
      best = i;
      bestRest = rest;
    }
  }
  return best;
}

int64_t KeyedTable::PickTarget(const KeyPlace& place, const RateStep& step) const {
  int64_t i = PickIn(place.home, step);
  if (i >= 0 || place.alt == place.home) return i;
  return PickIn(place.alt, step);
}

bool KeyedTable::SettleClaim(int64_t i, const RateStep& step, KeyedCounts* counts) {
  for (int spin = 0; spin < kl::kClaimSpins; spin++)
    if (Load(i + kl::kTagWord) >= 0) return true;
  int32_t claim = Load(i + kl::kTagWord);
  if (claim >= 0) return true;
  int32_t age = ClaimAge(step.nowMs, claim);
  if (age <= kl::kClaimBreakMs && age >= -kl::kClaimBreakMs) return false;
  // Claimed for over a second (or since a time that is no time): its claimant died or stopped. An empty slot again.
  if (Cas(i + kl::kTagWord, claim, 0)) counts->brokenClaims++;
  return true;
}

RateOutcome KeyedTable::Update(int64_t i, const KeyPlace& place, const RateStep& step, bool* relocate) {
  *relocate = false;
  int32_t word = EpochWord(step.epoch, true);
  for (int tries = 0; tries < kCasTries; tries++) {
    int32_t tat = Load(i + kl::kStateWord);
    int32_t written = Load(i + kl::kEpochWord);
    // The state read belongs to this key only if the slot still holds it afterwards (docs/rules/keyed-table.md).
    if (Load(i + kl::kTagWord) != place.tag || Load(i + kl::kCheckWord) != place.check) {
      *relocate = true;
      return RateOutcome::kRefused;
    }
    int32_t next = RateDebt(tat, written, step.now, step.epoch) + step.inc;
    if (next > step.tau) return RateOutcome::kRefused;
    if (written != word) Store(i + kl::kEpochWord, word);
    if (Cas(i + kl::kStateWord, tat, Wrap(int64_t(step.now) + next))) return RateOutcome::kAdmitted;
  }
  return RateOutcome::kContended;
}

KeyedTable::Step KeyedTable::Claim(int64_t i, const KeyPlace& place, const RateStep& step, KeyedCounts* counts,
                                   RateOutcome* out) {
  int32_t owner = Load(i + kl::kTagWord);
  int32_t claim = ClaimMark(step.nowMs);
  if (owner < 0 || !Cas(i + kl::kTagWord, owner, claim)) return Step::kRetry;
  int32_t tat = Load(i + kl::kStateWord);
  int32_t written = Load(i + kl::kEpochWord);
  // The slot back to its owner, unless the claim was broken meanwhile (then it is someone else's to give).
  auto giveBack = [&] {
    Cas(i + kl::kTagWord, claim, owner);
    return Step::kRetry;
  };
  // The owner spent since the slot was picked: it is not at rest, and keeps its slot.
  if (owner > 0 && RateDebt(tat, written, step.now, step.epoch) != 0) return giveBack();
  // The first request of the new key, and a state that differs from the one an owner's straggler expects.
  int32_t first = Wrap(int64_t(step.now) + step.inc);
  if (first == tat) first = Wrap(int64_t(first) + 1);
  Store(i + kl::kEpochWord, EpochWord(step.epoch, false));
  if (!Cas(i + kl::kStateWord, tat, first)) return giveBack();
  // Broken meanwhile (this claimant stalled past kClaimBreakMs): the slot is not this key's, and what this request
  // wrote there is rewritten by the slot's next claim. Look again; the request is decided where the key is.
  if (Load(i + kl::kTagWord) != claim) return Step::kRetry;
  Store(i + kl::kCheckWord, place.check);
  if (!Cas(i + kl::kTagWord, claim, place.tag)) return Step::kRetry;
  if (owner == 0) {
    counts->created++;
  } else {
    counts->reused++;
  }
  *out = RateOutcome::kAdmitted;
  return Step::kDone;
}

RateOutcome KeyedTable::Acquire(const KeyPlace& place, const RateStep& step, KeyedCounts* counts) {
  for (int rescan = 0; rescan < kl::kRescans; rescan++) {
    int64_t claimed;
    int64_t i = FindOrClaimed(place, &claimed);
    if (i >= 0) {
      bool relocate;
      RateOutcome outcome = Update(i, place, step, &relocate);
      if (!relocate) return outcome;
      continue;
    }
    // A slot being claimed may be this very key's, by another member: wait for it before claiming another (and
    // refuse, rather than hand out a second budget, if the claimant does not finish).
    if (claimed >= 0) {
      if (!SettleClaim(claimed, step, counts)) return RateOutcome::kContended;
      continue;
    }
    int64_t target = PickTarget(place, step);
    // Looked up again after the pick: a member claiming this key too took a slot before the pick (this one then sees
    // it, claimed or published), or picks the same first empty slot (one claim fails). No second slot.
    if (FindOrClaimed(place, &claimed) >= 0 || claimed >= 0) continue;
    if (target < 0) return RateOutcome::kNoSlot;
    RateOutcome outcome;
    if (Claim(target, place, step, counts, &outcome) == Step::kDone) return outcome;
  }
  return RateOutcome::kContended;
}

RateOutcome KeyedTable::AcquireWord(int32_t* words, const RateStep& step) {
  for (int tries = 0; tries < kCasTries; tries++) {
    int32_t tat = LoadAt(words);
    int32_t written = LoadAt(words + 1);
    int32_t next = RateDebt(tat, written, step.now, step.epoch) + step.inc;
    if (next > step.tau) return RateOutcome::kRefused;
    if (written != EpochWord(step.epoch, true)) StoreAt(words + 1, EpochWord(step.epoch, true));
    if (CasAt(words, tat, Wrap(int64_t(step.now) + next))) return RateOutcome::kAdmitted;
  }
  return RateOutcome::kContended;
}

}  // namespace bulwark

#include "core/hotkeys/heavy_keeper_decay.h"

namespace bulwark {

namespace {

// Increments up to this size use the reference's loop of coin flips (one uniform each: cheapest for small ones).
constexpr uint32_t kCoinFlipIncr = 16;
// Above 254, up to this many expected decrements are drawn one geometric wait at a time.
constexpr double kStepwiseDecrements = 32;
constexpr uint32_t kFlatFrom = kDecayTableSize - 1;  // counts from here on share lookup[255]

DecayOutcome CoinFlips(uint32_t count, uint32_t incr, const double* lookup, RandomSource& rng) {
  for (uint32_t left = incr; left > 0; left--) {
    double p = lookup[count < kFlatFrom ? count : kFlatFrom];
    if (rng.Uniform() < p && --count == 0) return {left, true};
  }
  return {count, false};
}

}  // namespace

DecayOutcome Decay(uint32_t count, uint32_t incr, const double* lookup, RandomSource& rng) {
  if (incr <= kCoinFlipIncr) return CoinFlips(count, incr, lookup, rng);
  uint64_t left = incr;
  uint64_t c = count;
  if (c >= kFlatFrom) {
    const double p = lookup[kFlatFrom];
    const uint64_t needed = c - (kFlatFrom - 1);  // decrements at p that bring the count to 254
    if (static_cast<double>(needed) <= kStepwiseDecrements || static_cast<double>(left) * p <= kStepwiseDecrements) {
      while (c >= kFlatFrom) {
        uint64_t wait = Geometric(rng, p);
        if (wait > left) return {static_cast<uint32_t>(c), false};
        left -= wait;
        c--;
      }
    } else {
      uint64_t successes = Binomial(rng, left, p);
      if (successes < needed) return {static_cast<uint32_t>(c - successes), false};
      double place = Beta(rng, static_cast<double>(needed), static_cast<double>(successes - needed + 1));
      uint64_t failuresBefore = Binomial(rng, left - successes, place);
      left -= needed + failuresBefore;
      c = kFlatFrom - 1;
    }
  }
  while (left > 0) {
    uint64_t wait = Geometric(rng, lookup[c]);
    if (wait > left) break;
    left -= wait;
    if (--c == 0) return {static_cast<uint32_t>(left + 1), true};
  }
  return {static_cast<uint32_t>(c), false};
}

}  // namespace bulwark

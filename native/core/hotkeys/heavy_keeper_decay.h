// HeavyKeeper's exponential decay of a bucket owned by another key, for any increment in O(1)
// (docs/rules/heavykeeper.md).
//
// The reference spends `incr` coin flips: each unit decrements the bucket's count c with probability
// lookup[min(c, 255)], and when c reaches 0 the new key takes the bucket with the units left (the current one
// included). We draw the same outcome in distribution without the loop:
// - the wait for the next decrement at count c is Geometric(lookup[c]), so each decrement costs one draw;
// - above 254 the probability is constant, so "how many of the n units decrement" is Binomial(n, p); if that
//   reaches the m decrements needed to get down to 254, the unit that made the m-th one is m + X, with X the
//   units that failed before it: X ~ Binomial(failures, Beta(m, S - m + 1)) (the m-th of S uniformly placed
//   successes), after which at most 254 geometric draws finish the job.
#pragma once
#include <cstdint>

#include "core/util/random_source.h"

namespace bulwark {

constexpr int kDecayTableSize = 256;

struct DecayOutcome {
  uint32_t count;  // the bucket's count afterwards
  bool taken;      // the count reached 0 and the new key took the bucket with `count` units
};

// count > 0: the bucket's current count; incr: units of the other key.
DecayOutcome Decay(uint32_t count, uint32_t incr, const double* lookup, RandomSource& rng);

}  // namespace bulwark

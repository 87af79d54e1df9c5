// A seeded pseudo-random source (xoshiro256**, seeded through splitmix64) and the variates HeavyKeeper's decay
// needs. Seeded runs repeat exactly on every platform: nothing here depends on the C++ library's distributions.
#pragma once
#include <cstdint>

namespace bulwark {

class RandomSource {
 public:
  explicit RandomSource(uint64_t seed);

  uint64_t Next();
  // Uniform on [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform on (0, 1]: safe to take the logarithm of.
  double UniformOpenZero() { return static_cast<double>((Next() >> 11) + 1) * 0x1.0p-53; }
  // The state as four words, for another implementation (HeavyKeeper's JavaScript front) to continue the sequence.
  void Save(uint64_t* out) const {
    for (int i = 0; i < 4; i++) out[i] = s_[i];
  }
  void Restore(const uint64_t* in) {
    for (int i = 0; i < 4; i++) s_[i] = in[i];
  }

 private:
  uint64_t s_[4];
};

// Bernoulli trials of success probability p (0 < p <= 1) up to and including the first success; at least 1.
// Saturates at 2^62 when p is so small that the wait is longer than any count.
uint64_t Geometric(RandomSource& rng, double p);

// Standard normal (Box-Muller).
double Normal(RandomSource& rng);

// Gamma(shape, 1) for shape >= 1 (Marsaglia and Tsang).
double Gamma(RandomSource& rng, double shape);

// Beta(a, b) for a, b >= 1, as a ratio of gammas.
double Beta(RandomSource& rng, double a, double b);

// Successes in n Bernoulli(p) trials, exactly distributed, in O(log n): Knuth's order-statistic recursion
// (TAOCP 3.4.1): the a-th smallest of n uniforms is Beta(a, n + 1 - a), which splits the trials in two.
uint64_t Binomial(RandomSource& rng, uint64_t n, double p);

}  // namespace bulwark

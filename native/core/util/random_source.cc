#include "core/util/random_source.h"

#include <cmath>

namespace bulwark {

namespace {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline uint64_t RotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr double kMaxGeometric = 4611686018427387904.0;  // 2^62
// Below this many trials the binomial is a plain loop of coin flips.
constexpr uint64_t kDirectBinomial = 48;

}  // namespace

RandomSource::RandomSource(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& word : s_) word = SplitMix64(&state);
}

uint64_t RandomSource::Next() {
  const uint64_t result = RotateLeft(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = RotateLeft(s_[3], 45);
  return result;
}

uint64_t Geometric(RandomSource& rng, double p) {
  if (!(p < 1)) return 1;
  if (!(p > 0)) return static_cast<uint64_t>(kMaxGeometric);
  // P(G > t) = (1 - p)^t, so G = 1 + floor(ln U / ln(1 - p)) with U uniform on (0, 1].
  double g = 1 + std::floor(std::log(rng.UniformOpenZero()) / std::log1p(-p));
  return g >= kMaxGeometric ? static_cast<uint64_t>(kMaxGeometric) : static_cast<uint64_t>(g);
}

double Normal(RandomSource& rng) {
  double radius = std::sqrt(-2 * std::log(rng.UniformOpenZero()));
  return radius * std::cos(6.283185307179586 * rng.Uniform());
}

double Gamma(RandomSource& rng, double shape) {
  const double d = shape - 1.0 / 3;
  const double c = 1 / std::sqrt(9 * d);
  for (;;) {  // accepts with probability > 0.95 per round
    double x = Normal(rng);
    double v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = rng.UniformOpenZero();
    if (u < 1 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
  }
}

double Beta(RandomSource& rng, double a, double b) {
  double x = Gamma(rng, a);
  double y = Gamma(rng, b);
  return x / (x + y);
}

uint64_t Binomial(RandomSource& rng, uint64_t n, double p) {
  uint64_t successes = 0;
  while (n > kDirectBinomial && p > 0 && p < 1) {
    const uint64_t a = 1 + n / 2;
    const uint64_t b = n + 1 - a;
    const double x = Beta(rng, static_cast<double>(a), static_cast<double>(b));
    if (x >= p) {
      // The trials below p are among the a - 1 uniforms below x, themselves uniform on [0, x).
      n = a - 1;
      p = p / x;
    } else {
      // The a smallest are all below p; the other b - 1 are uniform on (x, 1).
      successes += a;
      n = b - 1;
      p = (p - x) / (1 - x);
    }
  }
  if (!(p > 0)) return successes;
  if (!(p < 1)) return successes + n;
  for (uint64_t i = 0; i < n; i++) successes += rng.Uniform() < p ? 1 : 0;
  return successes;
}

}  // namespace bulwark

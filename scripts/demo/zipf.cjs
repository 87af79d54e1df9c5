// Keys with a Zipf popularity (a few items get most of the traffic, as in a flash sale), from a seeded generator so
// that every run offers the same keys.
'use strict'

/** `next()` returns a rank in [1, n] with probability proportional to 1 / rank^s. */
function zipfKeys(n, s, seed = 1) {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / Math.pow(i + 1, s)
  for (let i = 0; i < n; i++) cdf[i] /= sum
  let state = seed >>> 0 || 1
  const random = () => {
    // xorshift32: deterministic, good enough to pick keys
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4294967296
  }
  return () => {
    const u = random()
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cdf[mid] < u) lo = mid + 1
      else hi = mid
    }
    return lo + 1
  }
}

module.exports = { zipfKeys }

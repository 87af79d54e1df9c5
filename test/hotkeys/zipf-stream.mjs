// Seeded Zipf streams for the hot-key tests and bench/hotkeys.bench.mjs (plain JavaScript so both can load it).
// Draws k in [0, n) with P(k) proportional to (v + k)^-s, like Go's rand.NewZipf(r, s, v, n - 1), by inverting a
// precomputed CDF with a seeded generator: the same seed gives the same stream everywhere.

import { seededRandom } from '../helpers/seeded-random.mjs'

/** A function returning the next rank of a Zipf(s, v) stream over n ranks. */
export function zipfSampler({ s, v = 1, n, seed }) {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let k = 0; k < n; k++) {
    sum += Math.pow(v + k, -s)
    cdf[k] = sum
  }
  for (let k = 0; k < n; k++) cdf[k] /= sum
  const random = seededRandom(seed)
  return () => {
    const u = random()
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cdf[mid] > u) hi = mid
      else lo = mid + 1
    }
    return lo
  }
}

/** Exact counts of a stream: Map key -> count. */
export function exactCounts(keys) {
  const counts = new Map()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

/** The exact top-k as [key, count] pairs, count descending, ties by key ascending (the order list() uses). */
export function exactTop(counts, k) {
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, k)
}

// Whether memory stayed flat over a soak. After the warm-up the samples are cut in thirds, each summarised by its
// median; the last third must not sit above the first by more than:
// - max(5 %, 8 MiB) for RSS outside buffers (RSS minus the most external memory seen up to the sample: heap,
//   native allocations, code). The most, not the current: the allocator keeps the pages of freed buffers, so RSS
//   holds what the buffers once took. CI failed a flat run on RSS minus the current external (2026-12-05: external
//   fell 22.3 -> 12.0 MiB between thirds while RSS stayed, +8.1 MiB with 8 allowed; against the most seen, -8.5).
//   The price: native growth as large as a fall of the buffers below their most is not seen in that run;
// - max(25 %, 8 MiB) for external memory (Buffers and ArrayBuffers: those in flight follow the request rate);
// - max(10 %, 4 MiB) for the heap used after a full GC.
// Raw RSS is not judged: it follows the buffers in flight, so it swings with throughput (a 10-minute run on a busy
// machine: RSS medians +8.2 MiB between thirds while the rate went 3 400 -> 1 500 -> 4 000 rounds/s, RSS outside
// buffers +2.3). Medians, not the lowest sample: CI failed a flat run on one low RSS sample (2026-12-02: lowest
// 151.6 vs 160.9 MiB, medians 159.2 vs 161.3); a leak moves the whole third, so the median still sees it.
// Samples taken while the soak ran under 75 % of its fastest rate (samples with a `rate`, in rounds/s) are left
// out: V8 sizes its young generation to the allocation rate, so RSS outside buffers falls while the machine slows
// the soak and comes back with the rate (CI, 2026-12-05: 4 400 -> 2 900 -> 4 300 rounds/s took it from 116 to
// 96 MiB and back while external and the heap held; the dip fell in the first third and read +14.9 MiB). A leak
// grows through every rate, so the samples at the usual rate still show it.
// The least-squares slope of each is printed in KiB per minute for the record.
const MiB = 1024 * 1024
/** Samples taken under this share of the run's fastest rate are left out (above). */
const SLOW_SHARE = 0.75

function mean(xs) {
  return xs.reduce((a, x) => a + x, 0) / xs.length
}

function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Least-squares slope of ys over xs. */
function slope(xs, ys) {
  const mx = mean(xs)
  const my = mean(ys)
  let num = 0
  let den = 0
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my)
    den += (xs[i] - mx) ** 2
  }
  return den === 0 ? 0 : num / den
}

export function verdict(samples, warmUpSeconds) {
  // RSS less the most external memory seen up to each sample, warm-up included (what the allocator may still hold).
  let peak = 0
  const afterWarmUp = samples
    .map((s) => ({ ...s, outside: s.rss - (peak = Math.max(peak, s.external)) }))
    .filter((s) => s.t >= warmUpSeconds)
  const rates = afterWarmUp.filter((s) => s.rate !== undefined).map((s) => s.rate)
  const fastest = rates.length > 0 ? Math.max(...rates) : 0
  const steady = afterWarmUp.filter((s) => s.rate === undefined || s.rate >= SLOW_SHARE * fastest)
  if (steady.length < 3)
    return { flat: false, lines: ['not enough samples after the warm-up for a verdict (run longer)'] }
  const third = Math.max(1, Math.floor(steady.length / 3))
  const lines = []
  let flat = true
  for (const [name, of, pct, floor] of [
    ['rss outside buffers', (s) => s.outside, 0.05, 8 * MiB],
    ['external', (s) => s.external, 0.25, 8 * MiB],
    ['heapUsed', (s) => s.heapUsed, 0.1, 4 * MiB],
  ]) {
    const first = median(steady.slice(0, third).map(of))
    const last = median(steady.slice(-third).map(of))
    const allowed = Math.max(first * pct, floor)
    const perMinute =
      slope(
        steady.map((s) => s.t / 60),
        steady.map(of),
      ) / 1024
    const ok = last - first <= allowed
    flat &&= ok
    lines.push(
      `${name} (median): first third ${(first / MiB).toFixed(1)} MiB, last third ${(last / MiB).toFixed(1)} MiB ` +
        `(${last >= first ? '+' : ''}${((last - first) / MiB).toFixed(1)}, allowed +${(allowed / MiB).toFixed(1)}), slope ${perMinute.toFixed(0)} KiB/min: ${ok ? 'flat' : 'GROWING'}`,
    )
  }
  const slow = afterWarmUp.length - steady.length
  if (slow > 0)
    lines.push(
      `left out: ${slow} samples taken under ${SLOW_SHARE * 100} % of the fastest rate (${Math.round(fastest)}/s)`,
    )
  return { flat, lines }
}

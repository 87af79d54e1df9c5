// Whether memory stayed flat over a soak. After the warm-up the samples are cut in thirds; the last third must not
// sit above the first by more than max(5 %, 8 MiB) for RSS, compared by their lowest sample (RSS swings with
// buffers in use at the moment of the sample, but a leak raises its floor), and max(10 %, 4 MiB) for the heap used
// after a full GC, compared by mean. The least-squares slope of each is printed in KiB per minute for the record.
const MiB = 1024 * 1024

function mean(xs) {
  return xs.reduce((a, x) => a + x, 0) / xs.length
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
  const steady = samples.filter((s) => s.t >= warmUpSeconds)
  if (steady.length < 3)
    return { flat: false, lines: ['not enough samples after the warm-up for a verdict (run longer)'] }
  const third = Math.max(1, Math.floor(steady.length / 3))
  const lines = []
  let flat = true
  const lowest = (xs) => Math.min(...xs)
  for (const [field, pct, floor, summary, name] of [
    ['rss', 0.05, 8 * MiB, lowest, 'lowest'],
    ['heapUsed', 0.1, 4 * MiB, mean, 'mean'],
  ]) {
    const first = summary(steady.slice(0, third).map((s) => s[field]))
    const last = summary(steady.slice(-third).map((s) => s[field]))
    const allowed = Math.max(first * pct, floor)
    const perMinute =
      slope(
        steady.map((s) => s.t / 60),
        steady.map((s) => s[field]),
      ) / 1024
    const ok = last - first <= allowed
    flat &&= ok
    lines.push(
      `${field} (${name}): first third ${(first / MiB).toFixed(1)} MiB, last third ${(last / MiB).toFixed(1)} MiB ` +
        `(${last >= first ? '+' : ''}${((last - first) / MiB).toFixed(1)}, allowed +${(allowed / MiB).toFixed(1)}), slope ${perMinute.toFixed(0)} KiB/min: ${ok ? 'flat' : 'GROWING'}`,
    )
  }
  return { flat, lines }
}

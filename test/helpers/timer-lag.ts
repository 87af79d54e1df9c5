// How busy the machine is while an end-to-end test measures latency. Every process on it competes for the same
// cores, so how late this (otherwise idle) process's timers run is about how late the servers and clients under
// test are scheduled too. Latency bounds in test/e2e and test/demo add it, so that a machine loaded by something
// else loosens them honestly instead of failing them; past TOO_BUSY_MS no bound of a few hundred ms means anything,
// and those tests skip their latency checks (saying why) unless BULWARK_STRICT_TIMING=1 (CI, on a machine of its
// own, where a busy machine is a failure to look at).

export interface TimerLag {
  /** 99th percentile of how late a 10 ms timer fired, ms. */
  p99: number
  /** The latest it fired, ms. */
  max: number
}

/** p99 timer lag (ms) above which the machine is too busy with other work for latency bounds to be judged. */
export const TOO_BUSY_MS = 20

/**
 * Why latency cannot be judged in this run, or undefined when it can: timers later than TOO_BUSY_MS, or a capacity
 * measured before and after the run that moved by more than 30 % (others took or gave back cores meanwhile, so the
 * offered load was not what the test meant). Always undefined under BULWARK_STRICT_TIMING=1.
 */
export function tooBusyToJudge(lag: TimerLag, capacities: number[] = []): string | undefined {
  if (process.env.BULWARK_STRICT_TIMING === '1') return undefined
  if (lag.p99 > TOO_BUSY_MS) return `the machine is too busy to judge latency (timer lag p99 ${lag.p99.toFixed(0)} ms)`
  if (Math.min(...capacities) < 0.7 * Math.max(...capacities)) {
    return `the machine's capacity moved during the run (${capacities.map(Math.round).join(' then ')} req/s)`
  }
  return undefined
}

/** Runs `during` while a 10 ms timer measures how late it fires; resolves with both. */
export async function withTimerLag<T>(during: () => Promise<T>): Promise<[T, TimerLag]> {
  const lags: number[] = []
  let running = true
  let timer: NodeJS.Timeout | undefined
  const tick = (due: number) => {
    timer = setTimeout(() => {
      const now = performance.now()
      lags.push(Math.max(0, now - due))
      if (running) tick(now + 10)
    }, 10)
  }
  tick(performance.now() + 10)
  try {
    return [await during(), summarize(lags)]
  } finally {
    running = false
    clearTimeout(timer)
  }
}

function summarize(lags: number[]): TimerLag {
  const sorted = [...lags].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
  return { p99: at(0.99), max: sorted[sorted.length - 1] ?? 0 }
}

// How busy the machine is while an end-to-end test measures latency. Every process on it competes for the same
// cores, so how late this (otherwise idle) process's timers run is about how late the servers and clients under
// test are scheduled too. Latency bounds in test/e2e and test/demo add it, so that a machine loaded by something
// else loosens them honestly instead of failing them.

export interface TimerLag {
  /** 99th percentile of how late a 10 ms timer fired, ms. */
  p99: number
  /** The latest it fired, ms. */
  max: number
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

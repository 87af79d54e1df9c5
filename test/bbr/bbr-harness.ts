import { BbrLimiter, type BbrLimiterOptions } from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'

/**
 * A limiter on a hand-moved clock with a hand-set load, the reference test configuration by default: the CPU
 * rule alone (the latency rule, which the reference does not have, is tested in test/adaptive/).
 */
export function referenceLimiter(options: BbrLimiterOptions = {}) {
  const clock = new ManualClock()
  const signal = { load: 0 }
  const limiter = new BbrLimiter({
    window: 1000,
    buckets: 10,
    cpuThreshold: 800,
    signal: () => signal.load,
    now: clock.now,
    latency: false,
    ...options,
  })
  /** One request admitted at `at - rt` and released at `at`. */
  const complete = (at: number, rt = 0) => {
    clock.time = at - rt
    const token = limiter.tryAcquire()
    if (token < 0) throw new Error('setup request was shed')
    clock.time = at
    limiter.release(token)
  }
  /** Holds `n` admitted requests (load 0 while acquiring). */
  const hold = (n: number) => {
    const saved = signal.load
    signal.load = 0
    const tokens: number[] = []
    for (let i = 0; i < n; i++) tokens.push(limiter.tryAcquire())
    signal.load = saved
    if (tokens.some((t) => t < 0)) throw new Error('hold was shed')
    return tokens
  }
  /**
   * Bucket i (i = 0..9) gets passes(i) requests whose response times cycle through 10i+1 .. 10i+10, so its mean
   * response time is 10i + 5.5 (the reference test adds those ten values to its RT window directly).
   */
  const fill = (passes: (i: number) => number) => {
    for (let i = 0; i < 10; i++) {
      for (let n = 0; n < passes(i); n++) complete(i * 100 + 50, 10 * i + 1 + (n % 10))
    }
  }
  return { limiter, clock, signal, complete, hold, fill }
}

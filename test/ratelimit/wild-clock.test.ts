// Regression: a clock that jumps to a huge value or Infinity used to make the sliding window's bucket loops endless.
// Run in a child process, since an endless loop cannot be stopped in this one.
import { describe, expect, it } from 'vitest'

import { runScript } from '../helpers/run-script'

describe('local limiters with a clock that jumps to a huge value', () => {
  it('SlidingWindowLimiter and TokenBucket keep answering, and never admit more than the limit at one time', () => {
    for (const value of ['1e300', 'NaN', 'Infinity', '2 ** 62', '2 ** 53 * 100 + 300']) {
      const body = `
        let t = 0; const now = () => t
        const sw = new b.SlidingWindowLimiter({ limit: 5, window: 1000, now })
        const tb = new b.TokenBucket({ rate: 5, burst: 5, now })
        t = ${value}
        let admitted = 0
        for (let i = 0; i < 20; i++) if (sw.tryAcquire()) admitted++
        for (let i = 0; i < 20; i++) tb.tryAcquire()
        for (const v of [sw.retryAfterMs(), sw.available(), tb.retryAfterMs(), tb.available()]) {
          if (!(v >= 0)) throw new Error('a negative or NaN answer: ' + v)
        }
        console.log(admitted)`
      const run = runScript(body, 5000)
      expect({ value, timedOut: run.timedOut, status: run.status, stderr: run.stderr }).toEqual({
        value,
        timedOut: false,
        status: 0,
        stderr: '',
      })
      expect(Number(run.stdout.trim())).toBeLessThanOrEqual(5)
    }
  })
})

// Regression: a clock that jumps to a huge value or Infinity used to make the window merge loop forever (the epoch
// stopped moving by one past 2^53). Run in a child process, since an endless loop cannot be stopped in this one.
import { describe, expect, it } from 'vitest'

import { runScript } from '../helpers/run-script'

const cases: Record<string, string> = {
  SreBreaker:
    'const x = new b.SreBreaker({ now }); jump(); x.tryAcquire(); x.recordSuccess(); x.recordFailure(); x.stats()',
  CircuitBreaker:
    'const x = new b.CircuitBreaker({ now }); jump(); x.tryAcquire(); x.recordFailure(1); x.recordSuccess(1); x.stats()',
  RetryBudget: 'const x = new b.RetryBudget({ now }); jump(); x.recordRequest(); x.tryAcquire(); x.stats()',
}

describe('breakers with a clock that jumps to a huge value', () => {
  for (const [name, body] of Object.entries(cases)) {
    it(`${name} keeps answering`, () => {
      for (const value of ['1e300', 'Infinity', '2 ** 62', 'NaN', '-1e300']) {
        const run = runScript(
          `let t = 0; const now = () => t; const jump = () => { t = ${value} }; ${body}; console.log('done')`,
          5000,
        )
        expect({ value, timedOut: run.timedOut, status: run.status, stderr: run.stderr }).toEqual({
          value,
          timedOut: false,
          status: 0,
          stderr: '',
        })
        expect(run.stdout).toContain('done')
      }
    })
  }
})

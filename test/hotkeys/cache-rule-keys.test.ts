// Cache-rule patterns run on capped keys (issue 13 item 8, docs/guide/trust.md): a key from a request cannot make a
// pattern with backtracking run for long. Run in a child process: the old code's match does not end in a test's time.
import { describe, expect, it } from 'vitest'

import { runScript } from '../helpers/run-script'

describe('HotKeyCache rule patterns and long keys', () => {
  it('a pattern that backtracks (/a*b/, quadratic) on a 1 MB key ends at once; it reads the first 256 characters', () => {
    const r = runScript(
      `const cache = new b.HotKeyCache({ k: 4, autoCache: false, allow: [{ pattern: /a*b/ }, { pattern: /^x{256}$/ }] })
const t = performance.now()
cache.addWithValue('a'.repeat(1 << 20), 1)
const ms = performance.now() - t
cache.addWithValue('x'.repeat(256) + 'tail', 2) // matches on its first 256 characters
console.log(JSON.stringify({ ms, cached: cache.get('x'.repeat(256) + 'tail'), missed: cache.get('a'.repeat(1 << 20)) }))`,
      20_000,
    )
    expect(r.timedOut).toBe(false) // before: over 20 s (about 10^12 steps)
    const out = JSON.parse(r.stdout)
    expect(out.ms).toBeLessThan(200)
    expect(out.cached).toBe(2)
    expect(out.missed).toBeUndefined()
  })
})

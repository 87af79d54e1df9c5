import { spawnSync } from 'child_process'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

// The pair allocates nothing (docs/guide/bbr.md): a double passed or returned across a call V8 did not inline is
// boxed, 16 bytes a request. Each signal variant, and AdaptiveBulkhead's pair (the same sampler and windows), runs
// alone in a real process, --expose-gc, with a 64 MB semi-space (a million boxed doubles are 16 MB) so no scavenge
// frees them before heapUsed is read.
const fixture = path.join(__dirname, '..', 'fixtures', 'bbr-pair-heap.cjs')
const flags = ['--expose-gc', '--no-concurrent-recompilation', '--min-semi-space-size=64', '--max-semi-space-size=64']

describe('tryAcquire + release pair heap', () => {
  it.each(['default', 'function', 'shared', 'bulkhead'])('a %s pair grows the heap by under 2 bytes', (variant) => {
    const run = spawnSync(process.execPath, [...flags, fixture, variant], { encoding: 'utf8', timeout: 20_000 })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    const result = JSON.parse(run.stdout) as { bytesPerPair: number; admitted: number; pairs: number }
    // Every pair took the admitting path (a shed one would measure only tryAcquire).
    expect(result.admitted).toBe(result.pairs)
    expect(result.bytesPerPair).toBeLessThan(2)
  })
})

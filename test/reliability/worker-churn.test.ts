// 300 worker threads (the release build) load the addon, use every component and exit, half of them without closing
// anything: after a warm-up round, 200 more leave RSS, descriptors and region mappings where they were.
import { spawnSync } from 'child_process'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

interface Phase {
  phase: string
  workers: number
  rss: number
  fds: number
  shmMappings: number
}

// A worker that leaked as little as 40 KiB (a region's mapping and member table, say) would pass this in 200 workers.
const RSS_BOUND = 8 * 1024 * 1024

describe('worker threads come and go', () => {
  it('RSS stays flat, descriptors and mappings are given back, no region is left behind', () => {
    const fixture = path.join(__dirname, 'fixtures', 'worker-churn.cjs')
    const prefix = `churn-${process.pid}`
    const r = spawnSync(process.execPath, ['--expose-gc', fixture, prefix, '50', '50', '10'], {
      encoding: 'utf8',
      timeout: 600_000,
    })
    console.log(r.stdout.trim())
    expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toEqual({ status: 0, signal: null, stderr: '' })
    const phases = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
    const [warm, , last] = phases as Phase[]
    expect(last.workers - warm.workers).toBe(200)
    expect(last.rss - warm.rss).toBeLessThan(RSS_BOUND)
    expect(last.fds).toBe(warm.fds)
    expect(last.shmMappings).toBe(warm.shmMappings)
    expect(phases.at(-1)).toEqual({ phase: 'done', workers: 300, inFlightAfterWorkers: 0, leftover: [] })
  })
})

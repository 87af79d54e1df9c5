// Which requests BbrLimiter times with the precise clock (docs/rules/bbr.md, "Clocks and the cost per request").
import { describe, expect, it } from 'vitest'

import { RtSampler } from '../../lib/admission/rt-sampler'

const NOT_SAMPLED = -1

function run(sampler: RtSampler, calls: number, now: number): number {
  let sampled = 0
  for (let i = 0; i < calls; i++) if (sampler.start(now, NOT_SAMPLED) !== NOT_SAMPLED) sampled++
  return sampled
}

describe('RtSampler', () => {
  it('with a fixed rate, times one request in `every` plus the first of each half bucket', () => {
    const sampler = new RtSampler(8, false, 100, () => 1)
    expect(run(sampler, 800, 0)).toBe(101) // the first (forced) and every 8th: 8, 16, ... 800
    expect(run(sampler, 800, 50)).toBe(101) // a new half bucket forces its first again
  })

  it('automatic: times every request of a quiet limiter', () => {
    const sampler = new RtSampler(8, true, 100, () => 1)
    for (let half = 0; half < 10; half++) expect(run(sampler, 20, half * 50)).toBe(20)
  })

  it('automatic: a busy limiter times 32 to 64 requests per half bucket, never fewer than 1 in 1024', () => {
    const sampler = new RtSampler(8, true, 100, () => 1)
    run(sampler, 6400, 0)
    // 6 400 requests in the last half bucket: one in 128 (50 of them), plus the forced first.
    expect(run(sampler, 6400, 50)).toBe(51)
    run(sampler, 1 << 22, 100)
    expect(run(sampler, 1 << 22, 150)).toBeGreaterThanOrEqual((1 << 22) / 1024)
    // Traffic falls: the next half bucket goes back to timing every request.
    run(sampler, 10, 200)
    expect(run(sampler, 10, 250)).toBe(10)
  })

  it('automatic: a burst within a half bucket halves the rate after every 64 response times', () => {
    const sampler = new RtSampler(8, true, 100, () => 1)
    run(sampler, 10, 0) // quiet: the next half bucket times every request
    // 64 at 1 in 1, 64 at 1 in 2, ... 64 at 1 in 512, then 1 in 1024: about 64 * log2(n / 64), not n.
    const sampled = run(sampler, 1 << 20, 50)
    expect(sampled).toBeGreaterThan(64 * 10)
    expect(sampled).toBeLessThan(64 * 11 + (1 << 20) / 1024)
    // A quiet half bucket after it: every request timed again.
    run(sampler, 10, 100)
    expect(run(sampler, 10, 150)).toBe(10)
  })

  it('with a fixed rate or while timeAll is on, a burst does not change the rate', () => {
    const fixed = new RtSampler(1, false, 100, () => 1)
    expect(run(fixed, 10_000, 0)).toBe(10_000)
    const probing = new RtSampler(8, true, 100, () => 1)
    probing.timeAll(true)
    expect(run(probing, 10_000, 0)).toBe(10_000)
  })

  it('times every request while timeAll is on (a latency probe), then samples as before', () => {
    const sampler = new RtSampler(8, false, 100, () => 1)
    run(sampler, 80, 0)
    sampler.timeAll(true)
    expect(run(sampler, 80, 10)).toBe(80)
    sampler.timeAll(false)
    expect(run(sampler, 80, 20)).toBe(10)
  })

  it('returns the precise clock for a sampled request', () => {
    const sampler = new RtSampler(1, false, 100, () => 123.5)
    expect(sampler.start(0, NOT_SAMPLED)).toBe(123.5)
  })

  it('startAt reads `now` from the array and samples exactly as start does', () => {
    const byValue = new RtSampler(8, true, 100, () => 1)
    const byCell = new RtSampler(8, true, 100, () => 1)
    const times = new Float64Array(3)
    const picks: [number, number][] = []
    for (let i = 0; i < 5000; i++) {
      const now = Math.floor(i / 700) * 50 + 0.25
      times[2] = now
      picks.push([byValue.start(now, NOT_SAMPLED), byCell.startAt(times, 2, NOT_SAMPLED)])
    }
    expect(picks.filter(([a]) => a !== NOT_SAMPLED).length).toBeGreaterThan(100)
    for (const [a, b] of picks) expect(b).toBe(a)
  })
})

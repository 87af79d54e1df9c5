// The CPU-bound overload scenario, deterministic: BbrLimiter's defaults on a hand-moved clock in front of a
// simulated cluster (test/bbr/cpu-cluster-sim.ts) must not shed a steady load the cluster can serve, must shed
// overload, and must stop shedding soon after it ends (bench/overload/scenarios/cpu-bound.mjs measures the same
// on real processes, where other processes' CPU use adds noise).
import { afterEach, describe, expect, it } from 'vitest'

import { BbrLimiter } from '../../lib/index'
import '../helpers/cleanup-regions'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'
import { simulateCpuCluster, type LoadStep } from './cpu-cluster-sim'

const made: BbrLimiter[] = []
afterEach(() => {
  for (const l of made.splice(0)) l.close()
})

function cluster(workers = 2) {
  const clock = new ManualClock(1000)
  const shared = uniqueName('steady')
  const signals = Array.from({ length: workers }, () => ({ load: 0, delay: 0 }))
  const limiters = signals.map((s) => {
    const limiter = new BbrLimiter({
      shared,
      now: clock.now,
      signal: { load: () => s.load, delay: () => s.delay },
    })
    made.push(limiter)
    return limiter
  })
  return { clock, limiters, signals }
}

const run = (steps: LoadStep[]) => {
  const { clock, limiters, signals } = cluster()
  return simulateCpuCluster(limiters, signals, clock, steps)
}

describe('BbrLimiter in front of a CPU-bound cluster (deterministic)', () => {
  it('sheds nothing at 0.5x and (nearly) nothing at 1x, steady', () => {
    const [half, full] = run([
      { load: 0.5, seconds: 8 },
      { load: 1, seconds: 16 },
    ])
    expect(half.shed).toBe(0)
    expect(full.shed / full.offered).toBeLessThanOrEqual(0.01)
    expect(full.good / full.offered).toBeGreaterThanOrEqual(0.99)
  })

  it('sheds about the excess of a slight overload (1.05x), keeping goodput at capacity', () => {
    const [, over] = run([
      { load: 0.5, seconds: 4 },
      { load: 1.05, seconds: 12 },
    ])
    // The excess is 1 - 1 / 1.05 = 4.8 % of the offered requests.
    expect(over.shed / over.offered).toBeLessThanOrEqual(0.07)
    expect(over.good).toBeGreaterThanOrEqual(0.98 * 250 * 12)
  })

  it('at 4x keeps goodput near capacity, then stops shedding within 2 s of the step back to 0.5x', () => {
    const steps = [0.5, 1, 2, 4, 0.5].map((load) => ({ load, seconds: 8 }))
    const results = run(steps)
    const capacity = 250 * 8 // requests the cluster can serve in a step
    expect(results[3].good).toBeGreaterThanOrEqual(0.9 * capacity)
    const recovery = results[4].shedBins
    const settled = recovery.findIndex((_, i) => recovery.slice(i).every((n) => n === 0))
    expect(settled).toBeGreaterThanOrEqual(0) // -1: still shedding at the end
    expect(settled * 0.25).toBeLessThanOrEqual(2)
  })
})

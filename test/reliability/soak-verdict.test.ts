// The soak's flat/growing verdict (scripts/soak/verdict.mjs) on recorded and synthetic samples: the RSS noise CI sees
// and RSS that follows the rate of buffers in flight must read flat; a leak of 16 MiB a minute (about 50 bytes a
// round at CI's 5 000 rounds/s), of buffers or of the heap must read growing.
import { describe, expect, it } from 'vitest'

interface Sample {
  t: number
  rss: number
  external: number
  heapUsed: number
  /** Rounds a second since the sample before (the soak records it; synthetic runs may leave it out). */
  rate?: number
}
type Verdict = (samples: Sample[], warmUpSeconds: number) => { flat: boolean; lines: string[] }

const MiB = 1024 * 1024
const loadVerdict = async (): Promise<Verdict> =>
  ((await import('../../scripts/soak/verdict.mjs' as string)) as { verdict: Verdict }).verdict

// CI's run of 2026-12-02 (2 minutes, a sample every 10 s: t, RSS, external in MiB; the heap stayed at 22-23 MiB).
// Judged by the lowest RSS sample of each third, the low 151.6 at 52 s failed it (+9.3 MiB, 8 allowed).
const ciRun = [
  [10, 152.9, 26.6],
  [21, 161.2, 28.5],
  [31, 159.2, 26.4],
  [41, 161.5, 26.4],
  [52, 151.6, 26.4],
  [62, 165.8, 30.5],
  [72, 159.3, 30.5],
  [83, 161.8, 34.6],
  [93, 164.5, 30.5],
  [103, 164.0, 30.5],
  [114, 160.9, 24.4],
  [124, 161.3, 34.6],
] as const
/** Recorded rows (t, RSS and external in MiB, and the rate when recorded) as samples, the heap steady at `heap` MiB. */
const recorded = (rows: readonly (readonly [number, number, number, number?])[], heap: number): Sample[] =>
  rows.map(([t, rss, external, rate]) => ({
    t,
    rss: rss * MiB,
    external: external * MiB,
    heapUsed: heap * MiB,
    ...(rate === undefined ? {} : { rate }),
  }))
const ciSamples = recorded(ciRun, 22.4)

// CI's run of 2026-12-05 (a sample every 5 s: t, RSS, external in MiB; the heap stayed at 21.5-22.6 MiB). The
// buffers in flight fell from about 22 to 12 MiB while RSS stayed: judged by RSS minus the current external
// memory, it failed (+8.1 MiB, 8 allowed).
const ciRunFreedBuffers = [
  [5, 143.4, 16.2],
  [11, 143.3, 20.3],
  [16, 143.0, 20.3],
  [22, 141.5, 18.3],
  [27, 140.8, 14.2],
  [32, 142.1, 18.3],
  [38, 142.9, 22.3],
  [43, 143.2, 22.3],
  [49, 143.6, 22.3],
  [54, 149.2, 9.2],
  [60, 142.5, 22.3],
  [65, 145.7, 24.4],
  [70, 144.1, 22.4],
  [76, 148.5, 26.4],
  [81, 149.8, 28.5],
  [86, 150.3, 28.5],
  [92, 150.2, 11.4],
  [97, 148.3, 9.3],
  [102, 150.2, 10.8],
  [108, 134.0, 13.6],
  [113, 134.4, 13.9],
  [119, 132.8, 13.2],
  [124, 147.7, 10.0],
] as const

// CI's run of 2026-12-05, 14:58 (t, RSS, external in MiB, rounds/s; the heap stayed at 21.5-22.7 MiB). The soak slowed
// from about 4 400 to 2 900 rounds/s between 43 and 81 s, and RSS fell by 20 MiB with it while external memory held
// (V8's young generation follows the allocation rate): with the dip in the first third it read +14.9 MiB.
const ciRunSlowed = [
  [5, 152.4, 32.6, 4280],
  [11, 150.0, 30.5, 4480],
  [16, 146.6, 26.4, 4460],
  [21, 147.8, 9.9, 4420],
  [27, 149.5, 11.1, 4380],
  [32, 149.3, 11.9, 4480],
  [38, 145.4, 26.4, 4440],
  [43, 128.4, 11.6, 2980],
  [48, 128.9, 11.8, 3200],
  [54, 128.2, 11.4, 2960],
  [59, 141.1, 9.1, 2840],
  [65, 141.2, 9.5, 2920],
  [70, 127.9, 10.9, 2860],
  [75, 129.0, 11.3, 3040],
  [81, 146.6, 8.9, 3200],
  [86, 152.1, 30.5, 4240],
  [92, 149.2, 28.5, 4160],
  [97, 151.8, 9.6, 4100],
  [102, 152.1, 11.3, 4320],
  [108, 145.0, 24.4, 4280],
  [113, 150.1, 9.2, 3460],
  [119, 147.9, 26.5, 4320],
  [124, 149.6, 11.0, 3940],
] as const

// A seeded sequence of noise in [-1, 1), so the synthetic runs are the same every time.
function noise(seed: number): () => number {
  let x = seed
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 30 - 1
}

/** A sample every 5 s: 125 MiB outside buffers plus `leak` MiB a minute and +-`swing` of noise, 20 MiB of buffers. */
function run(minutes: number, leak: number, swing: number, seed: number): Sample[] {
  const next = noise(seed)
  const samples: Sample[] = []
  for (let t = 5; t <= minutes * 60; t += 5) {
    const external = 20 * MiB
    samples.push({ t, rss: (125 + (leak * t) / 60 + swing * next()) * MiB + external, external, heapUsed: 22 * MiB })
  }
  return samples
}

describe('soak verdict', () => {
  it('reads the CI run with one low RSS sample as flat', async () => {
    const verdict = await loadVerdict()
    const result = verdict(ciSamples, 30)
    expect(result.flat, result.lines.join('\n')).toBe(true)
  })

  it('reads the CI run whose buffers shrank while RSS kept their pages as flat', async () => {
    const verdict = await loadVerdict()
    const result = verdict(recorded(ciRunFreedBuffers, 22.2), 30)
    expect(result.flat, result.lines.join('\n')).toBe(true)
  })

  it('reads the CI run that slowed for a while, RSS falling with the rate, as flat', async () => {
    const verdict = await loadVerdict()
    const samples = recorded(ciRunSlowed, 22.4)
    const result = verdict(samples, 30)
    expect(result.flat, result.lines.join('\n')).toBe(true)
    expect(result.lines[3]).toMatch(/^left out: 8 samples/)
    // Without the rates (every sample judged), the dip reads as growth: what CI saw.
    expect(
      verdict(
        samples.map(({ rate: _, ...s }) => s),
        30,
      ).flat,
    ).toBe(false)
  })

  it('reads a leak of 16 MiB a minute as growing when the soak slows for a while, in every seeded run', async () => {
    const verdict = await loadVerdict()
    for (let seed = 1; seed <= 50; seed++) {
      // The middle minute at 2 900 rounds/s, the rest at 4 400.
      const samples = run(2, 16, 7, seed).map((s) => ({ ...s, rate: s.t >= 45 && s.t < 80 ? 2900 : 4400 }))
      const result = verdict(samples, 30)
      expect(result.flat, `seed ${seed}`).toBe(false)
      expect(result.lines[0]).toMatch(/^rss outside buffers \(median\).*GROWING$/)
    }
  })

  it('reads native memory that grows while the buffers shrink a little as growing', async () => {
    const verdict = await loadVerdict()
    // External memory falls from 25 to 20 MiB and RSS with it, while 16 MiB a minute leaks outside the buffers: the
    // verdict credits the 2.5 MiB the buffers fell between thirds (the allocator may hold them), not the leak.
    const samples = run(2, 16, 2, 3).map((s) => {
      const external = (25 - (5 * s.t) / 120) * MiB
      return { ...s, rss: s.rss - s.external + external, external }
    })
    const result = verdict(samples, 30)
    expect(result.flat).toBe(false)
    expect(result.lines[0]).toMatch(/^rss outside buffers \(median\).*GROWING$/)
  })

  it('reads +-7 MiB of RSS noise without a trend as flat, in every seeded run', async () => {
    const verdict = await loadVerdict()
    for (let seed = 1; seed <= 50; seed++) expect(verdict(run(2, 0, 7, seed), 30).flat, `seed ${seed}`).toBe(true)
  })

  it('reads RSS that follows the buffers in flight as flat (rate 3 400 -> 1 500 -> 4 000 rounds/s)', async () => {
    const verdict = await loadVerdict()
    const samples = run(10, 0, 3, 11).map((s) => {
      const external = (s.t < 280 ? 18 : s.t < 440 ? 13 : 24) * MiB
      return { ...s, rss: s.rss - s.external + external, external }
    })
    const result = verdict(samples, 120)
    expect(result.flat, result.lines.join('\n')).toBe(true)
  })

  it('reads a leak of 16 MiB a minute outside buffers, under the same noise, as growing in every seeded run', async () => {
    const verdict = await loadVerdict()
    for (let seed = 1; seed <= 50; seed++) {
      const result = verdict(run(2, 16, 7, seed), 30)
      expect(result.flat, `seed ${seed}`).toBe(false)
      expect(result.lines[0]).toMatch(/^rss outside buffers \(median\).*GROWING$/)
    }
  })

  it('reads buffers that grow by 16 MiB a minute as growing', async () => {
    const verdict = await loadVerdict()
    const samples = run(2, 0, 2, 5).map((s) => {
      const external = (20 + (16 * s.t) / 60) * MiB
      return { ...s, rss: s.rss - s.external + external, external }
    })
    const result = verdict(samples, 30)
    expect(result.flat).toBe(false)
    expect(result.lines[1]).toMatch(/^external \(median\).*GROWING$/)
  })

  it('reads a heap that grows by 10 MiB over the run as growing', async () => {
    const verdict = await loadVerdict()
    const samples = run(2, 0, 1, 7).map((s) => ({ ...s, heapUsed: 22 * MiB + (10 * MiB * s.t) / 120 }))
    const result = verdict(samples, 30)
    expect(result.flat).toBe(false)
    expect(result.lines[2]).toMatch(/^heapUsed \(median\).*GROWING$/)
  })

  it('gives no verdict without enough samples after the warm-up', async () => {
    const verdict = await loadVerdict()
    expect(verdict(ciSamples.slice(0, 4), 30).flat).toBe(false)
  })
})

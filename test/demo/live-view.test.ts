import { describe, expect, it } from 'vitest'

import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { LiveView } = require('../../scripts/demo/live-view.cjs')

type Counts = { ok: number; shed: number; broken: number; failed: number; cacheHits: number; lookups: number }

/** A view of a fake host whose answers and clock the test sets; what it draws is collected frame by frame. */
function liveView() {
  const clock = new ManualClock(10_000)
  let counts: Counts = { ok: 0, shed: 0, broken: 0, failed: 0, cacheHits: 0, lookups: 0 }
  const frames: string[] = []
  const host = { name: uniqueName('demo-view'), totals: () => ({ ...counts }) }
  const view = new LiveView(host, { isTTY: false, write: (text: string) => frames.push(text) }, clock.now)
  const answered = (more: Partial<Counts>) => {
    counts = {
      ...counts,
      ...Object.fromEntries(Object.entries(more).map(([k, v]) => [k, counts[k as keyof Counts] + v])),
    }
  }
  return { view, clock, frames, answered }
}

const phase = (at: number) => ({
  protect: false,
  rate: 1131,
  warm: 1,
  seconds: 3,
  startedAt: at,
  surgeAt: at + 1000,
  failFrom: at + 2000,
  failTo: at + 3000,
})

describe('the demo live view', () => {
  it('shows answers per second while a run goes, and per-second averages over the run, labelled, when it ends', () => {
    const { view, clock, frames, answered } = liveView()
    view.start(phase(clock.time))
    try {
      answered({ ok: 200, shed: 900 })
      clock.advance(1000)
      view.draw()
      expect(frames.at(-1)).toContain('answers/s  200 200 · 503 shed 900 · 503 breaker 0 · 502 failed 0')
      answered({ ok: 300, shed: 800, failed: 50 })
      clock.advance(2000)
      view.draw()
      expect(frames.at(-1)).toContain('answers/s  200 150 · 503 shed 400 · 503 breaker 0 · 502 failed 25')

      // The run ends 5 ms after the last frame, with 20 more answers: not a rate of 4 000 per second.
      answered({ ok: 20 })
      clock.advance(5)
    } finally {
      view.stop()
    }
    const last = frames.at(-1) as string
    expect(last).toContain('per second, averaged over the 3 s run')
    // 520 answered 200, 1 700 shed and 50 failed in 3.005 s.
    expect(last).toContain('answers/s  200 173 · 503 shed 566 · 503 breaker 0 · 502 failed 17')
    expect(last).toContain('run over: 1 s of ordinary traffic, then a 3 s surge at 1,131 req/s')
  })
})

import { describe, expect, it } from 'vitest'

import {
  BreakerStateCell,
  CLOSED,
  genOf,
  HALF_OPEN,
  OPEN,
  permitsOf,
  placeBreakerState,
  stateOf,
} from '../../lib/components/breakers/breaker-state'
import { RegionLayout } from '../../lib/foundation/regions/region-layout'
import { SharedRegion } from '../../lib/foundation/regions/shared-region'

function cell() {
  const layout = new RegionLayout('state-test', 1)
  const placement = placeBreakerState(layout)
  return new BreakerStateCell(SharedRegion.local(layout), placement)
}

describe('BreakerStateCell', () => {
  it('starts closed in generation 0; each transition moves to the next generation and stamps its time', () => {
    const c = cell()
    const word = c.load()
    expect([stateOf(word), genOf(word), permitsOf(word)]).toEqual([CLOSED, 0, 0])
    const open = c.advance(word, OPEN, 1000)
    expect([stateOf(open), genOf(open)]).toEqual([OPEN, 1])
    expect(c.since(open, 5000)).toBe(1000)
    // A member acting on the old word loses.
    expect(c.advance(word, OPEN, 2000)).toBe(-1)
    expect(c.since(open, 5000)).toBe(1000)
  })

  it('hands out permits by compare-and-swap only', () => {
    const c = cell()
    const half = c.advance(c.load(), HALF_OPEN, 0)
    expect(c.takePermit(half)).toBe(true)
    expect(c.takePermit(half)).toBe(false) // stale: the word now counts one permit
    expect(permitsOf(c.load())).toBe(1)
  })

  it('stamps a transition whose winner died before stamping it, so nothing waits forever', () => {
    const c = cell()
    const open = c.advance(c.load(), OPEN, 1000)
    // The winner of the next transition swaps the word and dies before writing its time.
    const half = (((genOf(open) + 1) << 13) | HALF_OPEN) >>> 0
    expect(Atomics.compareExchange(c.i32, c.wordIndex, open, half)).toBe(open)
    expect(c.since(half, 7000)).toBe(7000)
    expect(c.since(half, 9000)).toBe(7000)
    // A reader still holding the older word does not overwrite the newer stamp.
    expect(c.since(open, 8000)).toBe(8000)
    expect(c.since(half, 9500)).toBe(7000)
  })

  it('counts passed probes per round, and none once the round is over', () => {
    const c = cell()
    const half = c.advance(c.load(), HALF_OPEN, 0)
    const gen = genOf(half)
    expect(c.addPass(gen)).toBe(1)
    expect(c.addPass(gen)).toBe(2)
    expect(c.passesOf(gen)).toBe(2)
    const next = c.advance(c.load(), HALF_OPEN, 10)
    expect(c.addPass(gen)).toBe(-1)
    expect(c.passesOf(genOf(next))).toBe(0)
    expect(c.addPass(genOf(next))).toBe(1)
  })
})

import { describe, expect, it } from 'vitest'

import { RegionLayout } from '../../lib/foundation/regions/region-layout'
import { RollingWindow } from '../../lib/foundation/regions/rolling-window'
import { SharedRegion } from '../../lib/foundation/regions/shared-region'
import { InvalidArgumentError } from '../../lib/foundation/errors/invalid-argument-error'
import { windowAdd } from '../helpers/test-natives'
import { ManualClock } from '../helpers/manual-clock'

function localWindow(size: number, bucketMs: number, start = 0) {
  const layout = new RegionLayout('test-window', 1)
  const placement = layout.window(size, bucketMs, start)
  const region = SharedRegion.local(layout)
  return { window: new RollingWindow(region, placement), region, placement }
}

const sums = (w: RollingWindow, now: number) => w.buckets(now).map((b) => b.sum)
const counts = (w: RollingWindow, now: number) => w.buckets(now).map((b) => b.count)

describe('RollingWindow: reference behaviour (docs/rules/rolling-window.md)', () => {
  it('size 3, bucket 1 s: buckets fill and roll oldest first', () => {
    const clock = new ManualClock()
    const { window } = localWindow(3, 1000)
    expect(sums(window, clock.now())).toEqual([0, 0, 0])
    window.add(1, clock.now())
    expect(sums(window, clock.now())).toEqual([0, 0, 1])
    clock.advance(1000)
    window.add(2, clock.now())
    window.add(3, clock.now())
    expect(sums(window, clock.now())).toEqual([0, 1, 5])
    clock.advance(1000)
    for (const v of [4, 5, 6]) window.add(v, clock.now())
    expect(sums(window, clock.now())).toEqual([1, 5, 15])
    clock.advance(1000)
    window.add(7, clock.now())
    expect(sums(window, clock.now())).toEqual([5, 15, 7])
  })

  // add(0); +101 add(1); +101 add(2); +lastGap add(4)
  function fillWithGap(lastGap: number) {
    const clock = new ManualClock()
    const { window } = localWindow(3, 100)
    for (const [gap, value] of [
      [0, 0],
      [101, 1],
      [101, 2],
      [lastGap, 4],
    ]) {
      clock.advance(gap)
      window.add(value, clock.now())
    }
    return sums(window, clock.now())
  }

  it('size 3, bucket 100: a gap shorter than the window keeps the live bucket', () => {
    // Epochs 2, 3, 4 are live at t = 403: bucket 2 holds 2, bucket 3 (slot 0) is empty, bucket 4 (slot 1) holds 4.
    expect(fillWithGap(201)).toEqual([2, 0, 4])
  })

  it('size 3, bucket 100: a gap longer than the window leaves only the new add', () => {
    expect(fillWithGap(501)).toEqual([0, 0, 4])
  })

  it('adding 0 raises the count but not the sum', () => {
    const { window } = localWindow(3, 100)
    window.add(0, 0)
    window.add(0, 0)
    window.add(5, 0)
    expect(window.total(0)).toEqual({ count: 3, sum: 5 })
  })

  it('rejects a negative or non-numeric value with a typed error', () => {
    const { window } = localWindow(3, 100)
    expect(() => window.add(-1, 0)).toThrow(InvalidArgumentError)
    expect(() => window.add(Number.NaN, 0)).toThrow(/argument `value` must be a number >= 0, got NaN/)
    expect(window.total(0).count).toBe(0)
  })

  it('anchors buckets at the window start time, not at zero', () => {
    const { window } = localWindow(2, 100, 1050)
    window.add(1, 1100) // epoch 0 (1050..1149)
    window.add(1, 1149)
    window.add(1, 1150) // epoch 1
    expect(counts(window, 1150)).toEqual([2, 1])
  })

  it('reading never advances the window', () => {
    const { window } = localWindow(3, 100)
    window.add(3, 0)
    expect(window.total(250).sum).toBe(3) // still live at epoch 2
    expect(window.total(300).sum).toBe(0) // gone at epoch 3
    expect(window.total(0).sum).toBe(3) // an earlier read time still sees it: nothing was cleared
  })

  it('recordAt reads `now` from the array and fills the buckets record fills', () => {
    const byValue = localWindow(3, 100).window
    const byCell = localWindow(3, 100).window
    const times = new Float64Array(2)
    for (const [value, now] of [
      [2, 10],
      [3, 150],
      [0, 180],
      [5, 420],
      [1, 430],
    ]) {
      byValue.record(value, now)
      times[1] = now
      byCell.recordAt(value, times, 1)
    }
    expect(sums(byCell, 430)).toEqual(sums(byValue, 430))
    expect(counts(byCell, 430)).toEqual(counts(byValue, 430))
    expect(counts(byCell, 430)).toEqual([0, 0, 2])
  })

  it('forEachCompleted visits the completed live buckets only, oldest first', () => {
    const { window } = localWindow(4, 100)
    for (let e = 0; e < 6; e++) window.add(e + 1, e * 100)
    const seen: number[] = []
    window.forEachCompleted(550, (b) => seen.push(b.sum))
    expect(seen).toEqual([3, 4, 5]) // epochs 2, 3, 4; epoch 5 is in progress
  })
})

describe('RollingWindow: C++ and JavaScript writers share one layout', () => {
  it('adds made by the native core land in the same buckets the TypeScript reader merges', () => {
    const layout = new RegionLayout('test-window', 1)
    const placement = layout.window(5, 100, 0)
    const region = SharedRegion.local(layout)
    // C++ writes the same lane the TypeScript writer uses; the reader must see both.
    const window = new RollingWindow(region, placement)
    window.add(2, 120)
    const view = new Uint8Array(region.buffer, region.base + placement.bucketsOffset)
    windowAdd(view, 0, 100, 5, 0, 130, 3, 4) // lane 0, epoch 1, value 3, four times
    expect(window.total(130)).toEqual({ count: 5, sum: 14 })
    windowAdd(view, 0, 100, 5, 0, 1000, 1, 1) // epoch 10 clears slot 0 for its new epoch
    expect(window.buckets(1000).map((b) => b.count)).toEqual([0, 0, 0, 0, 1])
  })
})

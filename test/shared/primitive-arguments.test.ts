// Regression tests for defects the reliability fuzzing found in the region primitives (docs/readme/reliability.md).
import { describe, expect, it } from 'vitest'

import { native } from '../../lib/foundation/native/load-native'
import { AtomicCounter } from '../../lib/foundation/regions/atomic-counter'
import { LaneCounter } from '../../lib/foundation/regions/lane-counter'
import { RegionLayout } from '../../lib/foundation/regions/region-layout'
import { regionLocation, removeRegion, removeStaleRegions } from '../../lib/foundation/regions/regions'
import { RollingWindow } from '../../lib/foundation/regions/rolling-window'
import { SharedRegion } from '../../lib/foundation/regions/shared-region'
import { runScript } from '../helpers/run-script'
import { argumentOf } from '../helpers/typed-errors'
import { uniqueName } from '../helpers/unique-name'

describe('region primitives refuse bad arguments with InvalidArgumentError naming them', () => {
  it('RegionLayout: kind, lanes, cell, block, lanes64, window and a region over 4 GiB', () => {
    expect(argumentOf(() => new RegionLayout('', 1))).toBe('kind')
    expect(argumentOf(() => new RegionLayout('has space', 1))).toBe('kind')
    expect(argumentOf(() => new RegionLayout('k'.repeat(32), 1))).toBe('kind')
    expect(argumentOf(() => new RegionLayout('k', Number.NaN))).toBe('lanes')
    expect(argumentOf(() => new RegionLayout('k', 4097))).toBe('lanes')
    const layout = new RegionLayout('k', 2)
    expect(argumentOf(() => layout.describe(7 as unknown as string))).toBe('part')
    expect(argumentOf(() => layout.describe('x'.repeat(200)))).toBe('part')
    expect(argumentOf(() => layout.cell('1' as unknown as number))).toBe('initial')
    expect(argumentOf(() => layout.block(-1))).toBe('bytes')
    expect(argumentOf(() => layout.block(2 ** 33))).toBe('bytes')
    expect(argumentOf(() => layout.lanes64(0))).toBe('cells')
    expect(argumentOf(() => layout.lanes64(17, true))).toBe('cells')
    expect(argumentOf(() => layout.window(0, 1, 0))).toBe('size')
    expect(argumentOf(() => layout.window(1, Number.POSITIVE_INFINITY, 0))).toBe('bucketMs')
    layout.block(2 ** 31)
    expect(argumentOf(() => layout.block(2 ** 31))).toBe('bytes')
    // Nothing refused changed the layout.
    expect(layout.payloadSize).toBe(2 ** 31)
  })

  it('SharedRegion: a bad name or layout is an InvalidArgumentError, not a native error without a type', () => {
    const layout = new RegionLayout('k', 2)
    layout.cell()
    expect(argumentOf(() => SharedRegion.open('bad name', layout))).toBe('name')
    expect(argumentOf(() => SharedRegion.open('x'.repeat(201), layout))).toBe('name')
    expect(argumentOf(() => SharedRegion.open(uniqueName('ok'), {} as RegionLayout))).toBe('layout')
    expect(argumentOf(() => SharedRegion.local(undefined as unknown as RegionLayout))).toBe('layout')
    expect(argumentOf(() => SharedRegion.forComponent('a/b', layout))).toBe('shared')
  })

  it('LaneCounter, AtomicCounter and RollingWindow check their placement against the region', () => {
    const layout = new RegionLayout('k', 1)
    const lanes = layout.lanes64(1)
    const cell = layout.cell(0, true)
    const placement = layout.window(4, 100, 0)
    const region = SharedRegion.local(layout)
    expect(argumentOf(() => new LaneCounter({} as SharedRegion, lanes))).toBe('region')
    expect(argumentOf(() => new LaneCounter(region, { ...lanes, offset: 1e9 }))).toBe('placement.offset')
    expect(argumentOf(() => new LaneCounter(region, lanes, 1))).toBe('cell')
    expect(argumentOf(() => new AtomicCounter(region, 2))).toBe('offset')
    expect(argumentOf(() => new RollingWindow(region, { ...placement, size: 0 }))).toBe('placement.size')
    expect(argumentOf(() => new RollingWindow(region, { ...placement, bucketsOffset: region.buffer.byteLength }))).toBe(
      'placement.bucketsOffset',
    )
    expect(argumentOf(() => new LaneCounter(region, lanes).add(Number.NaN))).toBe('value')
    const counter = new AtomicCounter(region, cell)
    expect(argumentOf(() => counter.add(1n as unknown as number))).toBe('value')
    expect(argumentOf(() => counter.store(0.5))).toBe('value')
    expect(argumentOf(() => new RollingWindow(region, placement).add(1, '0' as unknown as number))).toBe('now')
  })

  it('cells past 2 GiB of payload are addressed right (a signed shift made their index negative)', () => {
    const layout = new RegionLayout('k', 1)
    layout.block(2 ** 31 - 64)
    const cell = layout.cell(0, true)
    const placement = layout.window(2, 100, 0)
    const region = SharedRegion.local(layout)
    const counter = new AtomicCounter(region, cell)
    expect(counter.add(5)).toBe(5)
    const window = new RollingWindow(region, placement)
    window.add(3, 0)
    expect(window.total(0)).toEqual({ count: 1, sum: 3 })
  })

  it('forComponent with a shared name that cannot become a string is an InvalidArgumentError', () => {
    const layout = new RegionLayout('k', 1)
    expect(argumentOf(() => SharedRegion.forComponent(Object.create(null), layout))).toBe('shared')
  })

  it('removeStaleRegions with a filter that is not a function is an InvalidArgumentError, not a TypeError', () => {
    expect(argumentOf(() => removeStaleRegions(5 as never))).toBe('filter')
  })

  it('removeRegion and regionLocation refuse a name that is not <kind>.<name> with an InvalidArgumentError', () => {
    for (const bad of ['-', '', 'bbr', 'bbr.', '.x', 'a b.c', 7]) {
      expect(argumentOf(() => removeRegion(bad as never))).toBe('name')
      expect(argumentOf(() => regionLocation(bad as never))).toBe('name')
    }
    expect(regionLocation('bbr.some-app.api')).toContain('bbr.some-app.api')
  })

  it('AtomicCounter.add returns the value the cell holds, also when it wraps', () => {
    const layout = new RegionLayout('k', 1)
    const counter = new AtomicCounter(SharedRegion.local(layout), layout.cell(0, true))
    counter.store(2 ** 31 - 1)
    expect(counter.add(1)).toBe(-(2 ** 31))
    expect(counter.load()).toBe(-(2 ** 31))
  })
})

describe('region primitives under a clock or header gone wrong', () => {
  it('RollingWindow reads terminate for a huge or infinite time (epochs are clamped)', () => {
    // In a child process: before the fix this looped forever, which cannot be stopped in this process.
    const run = runScript(
      `
      const layout = new b.RegionLayout('k', 1)
      const placement = layout.window(10, 100, 0)
      const rolling = new b.RollingWindow(b.SharedRegion.local(layout), placement)
      rolling.add(1, 0)
      for (const now of [Infinity, 1e300, 2 ** 60, NaN, -1e300]) {
        if (rolling.buckets(now).length !== 10 || !(rolling.total(now).count >= 0)) throw new Error('bad read at ' + now)
        rolling.record(1, now)
      }
      console.log('done')`,
      5000,
    )
    expect({ timedOut: run.timedOut, status: run.status, stderr: run.stderr, stdout: run.stdout.trim() }).toEqual({
      timedOut: false,
      status: 0,
      stderr: '',
      stdout: 'done',
    })
  })

  it('laneHighWater never exceeds the lanes, whatever a faulty writer put in the header', () => {
    const name = uniqueName('highwater')
    const layout = new RegionLayout('k', 4)
    const lanes = layout.lanes64(1)
    const region = SharedRegion.open(name, layout)
    try {
      const counter = new LaneCounter(region, lanes)
      counter.add(2)
      Atomics.store(region.i32, native.layout.region.memberHighWater / 4, 2 ** 31 - 1)
      expect(region.laneHighWater()).toBe(4)
      expect(counter.total()).toBe(2)
    } finally {
      region.close()
    }
  })
})

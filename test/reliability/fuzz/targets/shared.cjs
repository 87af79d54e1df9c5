// Region primitives: RegionLayout, SharedRegion (local and shared), RollingWindow, LaneCounter, AtomicCounter,
// listRegions / removeRegion; and attaching to region files whose bytes were overwritten at random.
'use strict'
const fs = require('fs')
const { regionLocation } = require('../../../../dist-internal/foundation/regions/regions')
const { b, fc, assert, anyValue, weirdNumber, key, typedOrValue, uniqueName } = require('../kit.cjs')

const layoutArgs = [
  'kind',
  'lanes',
  'part',
  'initial',
  'ownLine',
  'bytes',
  'cells',
  'reclaim',
  'size',
  'bucketMs',
  'start',
]
const smallInt = fc.oneof(fc.integer({ min: 0, max: 64 }), weirdNumber, anyValue)

/** Builds a layout from fuzzed calls; returns it with the placements that succeeded. */
function buildLayout(kind, lanes, calls) {
  const made = typedOrValue(() => new b.RegionLayout(kind, lanes), { argumentsNamed: layoutArgs })
  if (made.error) return undefined
  const layout = made.value
  const placed = { lanes: [], cells: [], windows: [] }
  for (const [op, x, y] of calls) {
    const expect = { argumentsNamed: layoutArgs }
    if (op === 0) typedOrValue(() => layout.describe(x), expect)
    else if (op === 1) {
      const r = typedOrValue(() => layout.cell(typeof x === 'number' ? x : 0, y === true), expect)
      if (!r.error) placed.cells.push(r.value)
    } else if (op === 2) {
      const r = typedOrValue(() => layout.lanes64(x, y === true), expect)
      if (!r.error) placed.lanes.push(r.value)
    } else if (op === 3) {
      const r = typedOrValue(() => layout.window(x, typeof y === 'number' ? y : 100, 0), expect)
      if (!r.error) placed.windows.push(r.value)
    } else typedOrValue(() => layout.block(x), expect)
  }
  return { layout, placed }
}

function exercise(region, placed, values) {
  assert.ok(region.base >= 0 && region.member >= 0 && region.member < region.lanes)
  assert.ok(region.laneHighWater() >= 1 && region.laneHighWater() <= region.lanes)
  for (const p of placed.lanes) {
    const counter = new b.LaneCounter(region, p)
    let sum = 0
    for (const v of values) {
      const r = typedOrValue(() => counter.add(v), { argumentsNamed: ['value'] })
      if (!r.error) sum += v
    }
    assert.ok(
      Object.is(counter.local, sum) || Math.abs(counter.local - sum) <= Math.abs(sum) * 1e-9 + 1e-9,
      `lane ${counter.local} vs ${sum}`,
    )
  }
  for (const offset of placed.cells) {
    const atomic = new b.AtomicCounter(region, offset)
    for (const v of values) {
      const r = typedOrValue(() => atomic.add(v), { argumentsNamed: ['value'] })
      if (!r.error) assert.equal(r.value, atomic.load())
    }
  }
  for (const p of placed.windows) {
    const window = new b.RollingWindow(region, p)
    for (const v of values) {
      typedOrValue(() => window.add(v, v), { argumentsNamed: ['value', 'now'] })
      const t = window.total(typeof v === 'number' ? v : 0)
      assert.ok(t.count >= 0 && t.count <= values.length)
      assert.equal(window.buckets(typeof v === 'number' ? v : 0).length, p.size)
    }
  }
}

const layoutCall = fc.tuple(fc.integer({ min: 0, max: 4 }), smallInt, fc.oneof(fc.boolean(), smallInt))
const value = fc.oneof(fc.integer({ min: -100, max: 100 }), weirdNumber, anyValue)

module.exports = [
  {
    name: 'RegionLayout + SharedRegion.local + primitives: any arguments give typed errors or consistent counters',
    runs: 2000,
    property: fc.property(
      fc.oneof(fc.constantFrom('k', 'kind-1', 'a.b'), key, anyValue),
      fc.oneof(fc.integer({ min: 1, max: 8 }), smallInt),
      fc.array(layoutCall, { maxLength: 8 }),
      fc.array(value, { maxLength: 8 }),
      (kind, lanes, calls, values) => {
        const built = buildLayout(kind, lanes, calls)
        if (!built) return
        const region = b.SharedRegion.local(built.layout)
        exercise(region, built.placed, values)
        region.close()
      },
    ),
  },
  {
    name: 'SharedRegion.open / forComponent: any name gives a region or a typed error; no file is left behind',
    runs: 1000,
    property: fc.property(
      fc.oneof(fc.constantFrom('ok'), key, anyValue),
      fc.array(layoutCall, { maxLength: 4 }),
      fc.array(value, { maxLength: 4 }),
      fc.boolean(),
      (name, calls, values, viaComponent) => {
        const built = buildLayout('fz', 4, calls)
        if (!built || built.layout.payloadSize > 1 << 20) return // no 4 GiB files in /dev/shm
        const full = name === 'ok' ? uniqueName('fz-open') : name
        const r = typedOrValue(
          () =>
            viaComponent ? b.SharedRegion.forComponent(full, built.layout) : b.SharedRegion.open(full, built.layout),
          { argumentsNamed: ['name', 'shared', 'layout'] },
        )
        if (r.error) return
        const region = r.value
        exercise(region, built.placed, values)
        assert.equal(region.members().length, region.shared ? 1 : 0)
        region.close()
        if (region.shared) assert.ok(!b.listRegions().includes(region.name), 'the last member removes the name')
      },
    ),
  },
  {
    name: 'removeRegion / removeStaleRegions / listRegions: any argument gives a typed error or a list',
    runs: 1000,
    property: fc.property(fc.oneof(key, anyValue), fc.oneof(fc.func(fc.boolean()), anyValue), (name, filter) => {
      typedOrValue(() => b.removeRegion(name), { fields: ['name'], argumentsNamed: ['name'] })
      // Never without a filter: other test files may hold killed regions they are about to check.
      const own =
        typeof filter === 'function'
          ? (n) => n.includes(`-${process.pid}-`) && filter(n)
          : filter === undefined
            ? () => false
            : filter
      const removed = typedOrValue(() => b.removeStaleRegions(own), { argumentsNamed: ['filter'] })
      if (!removed.error) assert.ok(Array.isArray(removed.value))
      assert.ok(Array.isArray(b.listRegions()))
    }),
  },
  {
    name: 'attaching to a region file with random bytes overwritten or truncated: a region or a typed error, never a crash',
    runs: 1500,
    property: fc.property(
      fc.array(fc.tuple(fc.nat(4096 + 512), fc.nat(255)), { maxLength: 12 }),
      fc.option(fc.nat(8192)),
      fc.boolean(),
      (writes, truncateTo, otherLive) => {
        const name = uniqueName('fz-corrupt')
        const layout = new b.RegionLayout('fz', 4).describe('corrupt=1')
        const gauge = layout.lanes64(1, true)
        const first = b.SharedRegion.open(name, layout)
        const file = regionLocation(`fz.${name}`)
        // otherLive: the writer stays attached while the bytes change (its process lives); else it has detached and
        // the file was recreated from a copy, as a region left behind by a dead process would be.
        let bytes = fs.readFileSync(file)
        if (!otherLive) first.close()
        for (const [at, v] of writes) if (at < bytes.length) bytes[at] = v
        if (truncateTo !== null) bytes = bytes.subarray(0, Math.min(truncateTo, bytes.length))
        if (otherLive) {
          // Overwrite in place (header and payload) but never shrink a live mapping (that can SIGBUS: a documented limitation).
          const fd = fs.openSync(file, 'r+')
          fs.writeSync(fd, bytes, 0, bytes.length, 0)
          fs.closeSync(fd)
        } else {
          fs.writeFileSync(file, bytes, { mode: 0o600 })
        }
        const r = typedOrValue(() => b.SharedRegion.open(name, layout), {})
        if (!r.error) {
          new b.LaneCounter(r.value, gauge).add(1)
          assert.ok(r.value.laneHighWater() <= 4)
          r.value.members()
          r.value.close()
        } else {
          assert.ok(
            r.error instanceof b.RegionCorruptError ||
              r.error instanceof b.RegionMismatchError ||
              r.error instanceof b.SharedMemoryError,
            r.error.constructor.name,
          )
        }
        if (otherLive) first.close()
        try {
          fs.unlinkSync(file)
        } catch {
          /* removed by the last member */
        }
      },
    ),
  },
]

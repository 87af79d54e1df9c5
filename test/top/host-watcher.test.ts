import * as fs from 'fs'
import { afterEach, describe, expect, it } from 'vitest'

import { BbrLimiter, HeavyKeeper, InvalidOptionError, RegionLayout, SharedRegion } from '../../lib/index'
import { regionLocation } from '../../lib/foundation/regions/regions'
import { HostWatcher } from '../../lib/ops/top/host-watcher'
import { inspectRegions } from '../../lib/ops/top/inspect'
import { renderFrame } from '../../lib/ops/top/render-text'
import type { LimiterView } from '../../lib/ops/top/views'
import { ManualClock } from '../helpers/manual-clock'
import { uniqueName } from '../helpers/unique-name'

const open: Array<{ close(): void }> = []
afterEach(() => open.splice(0).forEach((c) => c.close()))

function limiterOf(frame: ReturnType<HostWatcher['sample']>): LimiterView {
  return frame.regions.find((r) => r.kind === 'bbr')?.view as LimiterView
}

describe('HostWatcher', () => {
  it('gives rates per second between samples, and starts over when a region is created again', () => {
    const name = uniqueName('watch')
    const limiter = new BbrLimiter({ shared: name, signal: () => 0, queueDelay: false })
    const keys = new HeavyKeeper({ shared: name, k: 4, seed: 1 })
    open.push(keys)
    const clock = new ManualClock(1000)
    const watcher = new HostWatcher({ names: [name] }, clock.now)
    const first = watcher.sample()
    expect(first.interval).toBe(0)
    expect(limiterOf(first).rates).toBeUndefined()

    for (let i = 0; i < 50; i++) limiter.release(limiter.tryAcquire())
    for (let i = 0; i < 30; i++) keys.add('k')
    clock.advance(2000)
    const second = watcher.sample()
    expect(second.interval).toBe(2)
    expect(limiterOf(second).rates).toEqual({
      admitted: 25,
      shed: 0,
      shedInFlight: 0,
      shedQueueDelay: 0,
      shedLatency: 0,
    })
    expect(second.regions.find((r) => r.kind === 'heavykeeper')?.view).toMatchObject({
      total: 30,
      rates: { counted: 15 },
    })

    // A fading halves the counted total: no negative rate.
    keys.fading()
    clock.advance(1000)
    expect(watcher.sample().regions.find((r) => r.kind === 'heavykeeper')?.view).toMatchObject({
      total: 15,
      rates: { counted: 0 },
    })

    limiter.close() // the last member leaves: the name goes, and a new limiter of that name is a new region
    const again = new BbrLimiter({ shared: name, signal: () => 0, queueDelay: false })
    open.push(again)
    again.tryAcquire()
    clock.advance(1000)
    const third = limiterOf(watcher.sample())
    expect(third.admitted).toBe(1)
    expect(third.rates).toBeUndefined()
  })

  it('lists regions of unknown kinds or layouts with their kind and size instead of failing', () => {
    const base = uniqueName('odd')
    const mystery = SharedRegion.open(base, new RegionLayout('mystery', 4).describe('x=1'))
    const future = SharedRegion.open(base, new RegionLayout('bbr', 4).describe('v9 window=10 buckets=2'))
    const tricky = SharedRegion.open(base, new RegionLayout('constructor', 2)) // not an inspector
    open.push(mystery, future, tricky)
    const reports = inspectRegions({ names: [base] }).filter((r) => r.kind !== 'constructor')
    expect(inspectRegions({ names: [`constructor.${base}`] })[0].status).toBe('unknown')
    expect(reports.map((r) => [r.kind, r.status])).toEqual([
      ['bbr', 'unreadable'],
      ['mystery', 'unknown'],
    ])
    expect(reports[0].detail).toContain('fingerprint "lanes=4 v9 window=10 buckets=2"')
    expect(reports[1]).toMatchObject({
      region: `mystery.${base}`,
      name: base,
      liveMembers: 1,
      pids: [process.pid],
      bytes: mystery.buffer.byteLength,
    })
    const text = renderFrame({ time: new Date().toISOString(), interval: 0, regions: reports })
    expect(text).toMatch(
      new RegExp(`OTHER REGIONS.*\\n${base}\\s+bbr\\s+1\\s+[\\d.]+ K?i?B\\s+bbr region with fingerprint`),
    )
    expect(text).toMatch(new RegExp(`\\n${base}\\s+mystery\\s+1\\s+[\\d.]+ K?i?B\\s+kind not read by bulwark top`))
  })

  // Windows keeps regions in named sections of the paging file, not files.
  it.skipIf(process.platform === 'win32')(
    'lists a file that is not a bulwark region as unreadable, and skips nothing else because of it',
    () => {
      const name = `junk.${uniqueName('junk')}`
      const file = regionLocation(name)
      fs.writeFileSync(file, Buffer.alloc(4096, 7), { mode: 0o600 })
      try {
        const [report] = inspectRegions({ names: [name] })
        expect(report).toMatchObject({ region: name, kind: '?', status: 'unreadable', liveMembers: 0 })
        expect(report.detail).toContain('does not start with the bulwark magic')
      } finally {
        fs.unlinkSync(file)
      }
    },
  )

  it('rejects bad options with typed errors', () => {
    expect(() => inspectRegions({ names: 'api' as never })).toThrow(InvalidOptionError)
    expect(() => inspectRegions({ names: ['api', 3] as never })).toThrow(
      /option `names` must be an array of region or shared names/,
    )
    expect(() => inspectRegions({ keys: -1 })).toThrow(/option `keys`/)
    expect(() => new HostWatcher({}, 5 as never)).toThrow(/option `clock` must be a function/)
  })

  it('selects regions by shared name, full region name or a * pattern', () => {
    const a = uniqueName('sel-a')
    const b = uniqueName('sel-b')
    open.push(new HeavyKeeper({ shared: a, k: 2 }), new HeavyKeeper({ shared: b, k: 2 }))
    const names = (pattern: string[]) =>
      inspectRegions({ names: pattern })
        .map((r) => r.name)
        .sort()
    expect(names([a])).toEqual([a])
    expect(names([`heavykeeper.${b}`])).toEqual([b])
    expect(names([`${a.slice(0, -3)}*`, `heavykeeper.${b}`])).toEqual([a, b].sort())
    expect(names(['no-such-*'])).toEqual([])
  })
})

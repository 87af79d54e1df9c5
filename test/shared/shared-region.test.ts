import { ChildProcess, fork, spawn } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import {
  LaneCounter,
  RegionCorruptError,
  RegionLayout,
  RegionMismatchError,
  SharedMemoryError,
  SharedRegion,
  listRegions,
  loadInfo,
  removeStaleRegions,
} from '../../dist/cjs'
import { native } from '../../lib/foundation/native/load-native'
import { regionLocation } from '../../lib/foundation/regions/regions'
import { reaperPasses } from '../helpers/reaper-passes'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { describeGauge } = require('../fixtures/region-holder.cjs')
const holder = path.join(__dirname, '..', 'fixtures', 'region-holder.cjs')
const L = native.layout.region
// The file of the region a 'life' layout opens under `name` (the region is listed as life.<name>).
const lifeFile = (name: string) => regionLocation(`life.${name}`)
// Tests that write a region's file by hand: Windows keeps regions in named sections of the paging file, not files.
// eslint-disable-next-line vitest/expect-expect -- defines a test function, is not a test
const itWithFiles = it.skipIf(process.platform === 'win32')

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL')
})

function spawnHolder(name: string, amount: number): Promise<{ child: ChildProcess; member: number; created: boolean }> {
  const child = fork(holder, [name, String(amount)], { stdio: 'inherit' })
  children.push(child)
  return new Promise((resolve, reject) => {
    child.once('message', (m: { member: number; created: boolean }) => resolve({ child, ...m }))
    child.once('exit', (code) => reject(new Error(`holder exited early with ${code}`)))
  })
}

function killAndWait(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGKILL')
  })
}

function layoutFor(kind: string, setting: string, lanes = 4) {
  const layout = new RegionLayout(kind, lanes).describe(setting)
  layout.cell()
  return layout
}

/** Writes a region file by hand, as another version or a broken writer would leave it. */
function craftRegion(
  name: string,
  opts: { version?: number; magic?: number; totalSize?: number; fileSize?: number; memberPid?: number },
) {
  const capacity = 4
  const payloadOffset = L.headerSize + capacity * L.memberSlotSize
  const fileSize = opts.fileSize ?? payloadOffset + 64
  const buf = Buffer.alloc(fileSize)
  buf.writeUInt32LE(opts.magic ?? L.magic, 0)
  buf.writeUInt32LE(opts.version ?? L.version, 4)
  buf.writeDoubleLE(opts.totalSize ?? payloadOffset + 64, L.totalSize)
  buf.writeInt32LE(2, L.state)
  buf.writeUInt32LE(capacity, L.memberCapacity)
  buf.writeUInt32LE(payloadOffset, L.payloadOffset)
  if (opts.memberPid !== undefined) buf.writeInt32LE(opts.memberPid, L.headerSize + L.memberPid)
  fs.writeFileSync(lifeFile(name), buf, { mode: 0o600 })
}

describe('SharedRegion: attach, header checks and lifetime', () => {
  it('attaches several members to one region and removes the name when the last one leaves', () => {
    const name = uniqueName('life')
    const a = SharedRegion.open(name, layoutFor('life', 'x=1'))
    const b = SharedRegion.open(name, layoutFor('life', 'x=1'))
    expect([a.created, b.created]).toEqual([true, false])
    expect([a.member, b.member]).toEqual([0, 1])
    expect(a.laneHighWater()).toBe(2)
    expect(a.name).toBe(`life.${name}`)
    expect(listRegions()).toContain(`life.${name}`)
    a.close()
    expect(listRegions()).toContain(`life.${name}`)
    b.close()
    expect(listRegions()).not.toContain(`life.${name}`)
    expect(fs.existsSync(lifeFile(name))).toBe(false)
  })

  it('refuses a configuration mismatch with an error naming both sides, and changes nothing', () => {
    const name = uniqueName('mismatch')
    const a = SharedRegion.open(name, layoutFor('life', 'window=10000'))
    let caught: unknown
    try {
      SharedRegion.open(name, layoutFor('life', 'window=5000'))
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(RegionMismatchError)
    expect((caught as Error).message).toContain('window=10000')
    expect((caught as Error).message).toContain('window=5000')
    expect(a.members()).toHaveLength(1)
    a.close()
  })

  itWithFiles('refuses a region of another layout version while its processes live', () => {
    const name = uniqueName('version')
    craftRegion(name, { version: 99, memberPid: process.ppid })
    expect(() => SharedRegion.open(name, layoutFor('life', 'x=1'))).toThrow(RegionMismatchError)
    expect(() => SharedRegion.open(name, layoutFor('life', 'x=1'))).toThrow(/layout version 99/)
    fs.unlinkSync(lifeFile(name))
  })

  itWithFiles('rebuilds a region of another layout version when every process that used it is gone', () => {
    const name = uniqueName('version-dead')
    craftRegion(name, { version: 99, memberPid: 2 ** 30 })
    const r = SharedRegion.open(name, layoutFor('life', 'x=1'))
    expect(r.rebuilt).toBe(true)
    r.close()
  })

  itWithFiles('reports a corrupted or truncated file as RegionCorruptError, never a crash', () => {
    const garbage = uniqueName('garbage')
    fs.writeFileSync(lifeFile(garbage), Buffer.alloc(4096, 0x5a), { mode: 0o600 })
    expect(() => SharedRegion.open(garbage, layoutFor('life', 'x=1'))).toThrow(RegionCorruptError)
    fs.unlinkSync(lifeFile(garbage))

    const truncated = uniqueName('truncated')
    craftRegion(truncated, { totalSize: 1 << 20, memberPid: process.ppid })
    expect(() => SharedRegion.open(truncated, layoutFor('life', 'x=1'))).toThrow(/truncated or corrupted/)
    fs.unlinkSync(lifeFile(truncated))

    const tiny = uniqueName('tiny')
    fs.writeFileSync(lifeFile(tiny), Buffer.alloc(100), { mode: 0o600 })
    expect(() => SharedRegion.open(tiny, layoutFor('life', 'x=1'))).toThrow(RegionCorruptError)
    fs.unlinkSync(lifeFile(tiny))
  })

  it('gives a typed error when every member slot is taken', () => {
    const name = uniqueName('full')
    const open = () => SharedRegion.open(name, layoutFor('life', 'x=1', 2))
    const a = open()
    const b = open()
    let caught: unknown
    try {
      open()
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(SharedMemoryError)
    expect((caught as SharedMemoryError).code).toBe('ERR_BULWARK_REGION_FULL')
    a.close()
    b.close()
  })

  it('rebuilds a region whose only process was killed, instead of trusting it', async () => {
    const name = uniqueName('crashed')
    const { child, created } = await spawnHolder(name, 7)
    expect(created).toBe(true)
    await killAndWait(child)
    const d = describeGauge()
    const region = SharedRegion.open(name, d.layout)
    // Windows: a region goes with its last handle, so the dead process left nothing to rebuild: it is new.
    expect(region.rebuilt).toBe(process.platform !== 'win32')
    expect(region.created).toBe(true)
    expect(new LaneCounter(region, d.gauge).total()).toBe(0)
    region.close()
  })

  it('gives back what a member held when it closes, and at the next reaper pass when its process is SIGKILLed', async () => {
    const name = uniqueName('reclaim')
    const d = describeGauge()
    const region = SharedRegion.open(name, d.layout)
    const gauge = new LaneCounter(region, d.gauge)
    gauge.add(1)
    const closer = await spawnHolder(name, 10)
    const victim = await spawnHolder(name, 100)
    expect(gauge.total()).toBe(111)

    closer.child.send('close')
    await new Promise((r) => closer.child.once('message', r))
    expect(gauge.total()).toBe(101)

    await killAndWait(victim.child)
    await reaperPasses(loadInfo)
    expect(gauge.total()).toBe(1)
    expect(region.members().map((m) => m.pid)).toEqual([process.pid])
    region.close()
  })

  it('detaches on process.exit(), which skips environment cleanup, so no name is left behind', async () => {
    const name = uniqueName('exit')
    const d = describeGauge()
    const region = SharedRegion.open(name, d.layout)
    const script = `
      const { SharedRegion, RegionLayout, LaneCounter } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'dist', 'cjs'))})
      const layout = new RegionLayout('gauge', 8).describe('gauge=1')
      const gauge = layout.lanes64(1, true)
      new LaneCounter(SharedRegion.open(${JSON.stringify(name)}, layout), gauge).add(5)
      process.exit(0)`
    const code = await new Promise<number | null>((resolve) =>
      spawn(process.execPath, ['-e', script], { stdio: 'inherit' }).once('exit', resolve),
    )
    expect(code).toBe(0)
    // Given back at exit, not by the reaper later: no waiting here. Windows runs no exit handler of an addon while
    // its threads still live: there this process's sampler reaps the member (its process handle says it has ended).
    const total = () => new LaneCounter(region, d.gauge).total()
    if (process.platform === 'win32')
      await waitFor(() => total() === 0, { what: 'the exited member reaped', timeout: 1000 })
    expect(total()).toBe(0)
    expect(region.members().map((m) => m.pid)).toEqual([process.pid])
    region.close()
    expect(listRegions()).not.toContain(`gauge.${name}`)
  })

  it('removeStaleRegions removes a region whose processes were all killed, and keeps one in use', async () => {
    const killed = uniqueName('stale')
    const inUse = uniqueName('in-use')
    const { child } = await spawnHolder(killed, 1)
    await killAndWait(child)
    const d = describeGauge()
    const region = SharedRegion.open(inUse, d.layout)
    const [killedRegion, inUseRegion] = [`gauge.${killed}`, `gauge.${inUse}`]
    // Windows: the killed process's region went with its last handle; elsewhere its file stays until removed.
    const leftBehind = process.platform === 'win32' ? [] : [killedRegion]
    expect(listRegions().filter((n) => n === killedRegion)).toEqual(leftBehind)
    expect(listRegions()).toContain(inUseRegion)
    // Only this file's names: other test files may hold killed regions they are about to check.
    const removed = removeStaleRegions((name) => name.includes(`-${process.pid}-`))
    expect(removed.filter((n) => n === killedRegion)).toEqual(leftBehind)
    expect(removed).not.toContain(inUseRegion)
    expect(listRegions()).not.toContain(killedRegion)
    expect(listRegions()).toContain(inUseRegion)
    region.close()
  })

  it('survives many processes attaching and detaching at once', async () => {
    const name = uniqueName('churn')
    const script = `
      const { SharedRegion, RegionLayout } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'dist', 'cjs'))})
      for (let i = 0; i < 40; i++) {
        const layout = new RegionLayout('churn', 8).describe('x=1'); layout.cell()
        SharedRegion.open(${JSON.stringify(name)}, layout).close()
      }`
    const runs = Array.from(
      { length: 6 },
      () =>
        new Promise<number>((resolve) => {
          const child = spawn(process.execPath, ['-e', script], { stdio: 'inherit' })
          child.once('exit', (code) => resolve(code ?? -1))
        }),
    )
    expect(await Promise.all(runs)).toEqual([0, 0, 0, 0, 0, 0])
    expect(listRegions()).not.toContain(`churn.${name}`)
  })
})

import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import { BbrLimiter, configureSampler, InvalidOptionError, memoryUsage, residentMemory, Shed } from '../../lib/index'
import { ManualClock } from '../helpers/manual-clock'
import { replaceFile } from '../helpers/replace-file'
import { waitFor } from '../helpers/wait-for'

const MiB = 1 << 20
const roots: string[] = []

afterAll(() => {
  configureSampler({ cgroupRoot: '/', cpuInterval: 500 })
  for (const dir of roots) fs.rmSync(dir, { recursive: true, force: true })
})

/** A limiter whose load never reaches its threshold: only memory can make it shed. Returns the decisions of `n`. */
function limiterAt(memory: unknown, clock = new ManualClock(1000)) {
  const limiter = new BbrLimiter({
    signal: () => 0,
    window: 1000,
    buckets: 10,
    minInFlight: 2,
    now: clock.now,
    memory: memory as never,
  })
  const decide = (n: number) => Array.from({ length: n }, () => limiter.tryAcquire())
  return { limiter, clock, decide }
}

describe('BbrLimiter: memory as a load signal', () => {
  it('refuses bad memory options with the field and the value named', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{}, /option `memory` must be an object with at least one of heapUsed, rss, container, gcPause/],
      [{ heap: 1 }, /option `memory\.heap` must be one of heapUsed, rss, container, gcPause, got 1/],
      [{ rss: -1 }, /option `memory\.rss` must be a finite number > 0, got -1/],
      [{ container: 1001 }, /option `memory\.container` must be a finite number >= 1 and <= 1000, got 1001/],
      [{ gcPause: 0 }, /option `memory\.gcPause` must be a finite number >= 1 and <= 1000, got 0/],
      ['lots', /option `memory` must be an options object/],
    ]
    for (const [memory, message] of bad) {
      expect(() => new BbrLimiter({ memory: memory as never })).toThrow(InvalidOptionError)
      expect(() => new BbrLimiter({ memory: memory as never })).toThrow(message)
    }
    new BbrLimiter({ memory: false }).close()
  })

  it('sheds past the capacity estimate while a signal is over its threshold, as at a load over cpuThreshold', async () => {
    await waitFor(() => residentMemory() > 0, { what: "the sampler's first memory reading" })
    const watched = limiterAt({ rss: 1 }) // every process is over one byte
    const unwatched = limiterAt(false)
    // In flight 0, 1, 2 pass (nothing is shed below the floor of 2); the fourth is over it.
    const decisions = watched.decide(4)
    expect(decisions.slice(0, 3).every((t) => t >= 0)).toBe(true)
    expect(decisions[3]).toBe(Shed.inFlight)
    expect(unwatched.decide(4).every((t) => t >= 0)).toBe(true)
    const s = watched.limiter.stats()
    expect(s.shedInFlight).toBe(1)
    expect(s.memory).toMatchObject({ over: 'rss', overChecks: 1 })
    expect(s.memory?.rss).toBe(residentMemory())
    expect(unwatched.limiter.stats().memory).toBeUndefined()
    watched.limiter.close()
    unwatched.limiter.close()
  })

  it('does not shed while every signal is under its threshold', () => {
    const { limiter, decide } = limiterAt({ heapUsed: 1e15, rss: 1e15, container: 1000 })
    expect(decide(50).every((t) => t >= 0)).toBe(true)
    const memory = limiter.stats().memory
    expect(memory).toMatchObject({ over: undefined, overChecks: 0 })
    expect(memory?.heapUsed).toBeGreaterThan(1 * MiB)
    limiter.close()
  })

  it("follows the container's memory as the sampler reads it, re-checked as the limiter's clock moves", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-bbr-memory-'))
    roots.push(root)
    fs.cpSync(path.join(__dirname, '..', 'fixtures', 'cgroup-memory', 'v2-limit'), root, { recursive: true })
    configureSampler({ cgroupRoot: root, cpuInterval: 10 })
    await waitFor(() => memoryUsage() === 375, { what: 'the fixture cgroup at 375 permille' })
    const { limiter, clock, decide } = limiterAt({ container: 800 })
    expect(decide(5).every((t) => t >= 0)).toBe(true)
    replaceFile(path.join(root, 'sys/fs/cgroup/app.slice/web.service/memory.current'), `${480 * MiB}\n`)
    await waitFor(() => memoryUsage() === 812.5, { what: 'the cgroup at 812.5 permille' })
    expect(limiter.tryAcquire()).toBeGreaterThanOrEqual(0) // checked at most every 100 ms of the limiter's clock
    clock.advance(100)
    expect(limiter.tryAcquire()).toBe(Shed.inFlight)
    expect(limiter.stats().memory).toMatchObject({ container: 812.5, over: 'container' })
    // Back under: the cooldown since the last shed (1 s) still applies the in-flight check, then admission resumes.
    replaceFile(path.join(root, 'sys/fs/cgroup/app.slice/web.service/memory.current'), `${256 * MiB}\n`)
    await waitFor(() => memoryUsage() === 375, { what: 'the cgroup back at 375 permille' })
    clock.advance(100)
    expect(limiter.tryAcquire()).toBe(Shed.inFlight)
    clock.advance(1000)
    expect(limiter.tryAcquire()).toBeGreaterThanOrEqual(0)
    expect(limiter.stats().memory?.over).toBeUndefined()
    limiter.close()
  })

  it('measures the share of time this thread spends paused in GC', async () => {
    const { limiter, clock } = limiterAt({ gcPause: 1000 })
    let garbage: number[][] = []
    const paused = await waitFor(
      () => {
        for (let i = 0; i < 200; i++) garbage = [new Array(10_000).fill(i), ...garbage.slice(0, 50)]
        clock.advance(100)
        limiter.tryAcquire()
        return limiter.stats().memory?.gcPause
      },
      { what: 'a window with GC pauses', timeout: 20_000 },
    )
    expect(paused).toBeGreaterThan(0)
    expect(paused).toBeLessThanOrEqual(1000)
    limiter.close()
  })

  it('sheds before a process whose requests hold memory dies of its heap limit; without it, the process dies', () => {
    const fixture = path.join(__dirname, '..', 'fixtures', 'heap-grower.cjs')
    const run = (mode: string) =>
      spawnSync(process.execPath, ['--max-old-space-size=192', fixture, mode], { encoding: 'utf8', timeout: 60_000 })
    const guarded = run('guarded')
    expect(guarded.stderr).toBe('')
    expect(guarded.status).toBe(0)
    const result = JSON.parse(guarded.stdout) as Record<string, number | string>
    expect(result).toMatchObject({ shed: 200, reason: 'in-flight', over: 'heapUsed' })
    expect(result.heapAtFirstShed).toBeGreaterThanOrEqual(64 * MiB)
    expect(result.heapUsed).toBeLessThan(160 * MiB)

    const unguarded = run('unguarded')
    expect(unguarded.status).not.toBe(0)
    expect(unguarded.stderr).toMatch(/heap out of memory/i)
  }, 120_000)
})

// Members in another pid namespace (containers of one pod that share /dev/shm but not their pids): their pid means
// nothing here (the one below is 1, which here is init, alive), so their lease says whether they live.
import { type ChildProcess, spawn, spawnSync } from 'child_process'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import { LaneCounter, loadInfo, SharedRegion } from '../../dist/cjs'
import { reaperPasses } from '../helpers/reaper-passes'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { describeGauge } = require('../fixtures/region-holder.cjs')
const holder = path.join(__dirname, '..', 'fixtures', 'region-holder.cjs')

const canUnshare =
  process.platform === 'linux' && process.getuid?.() === 0 && spawnSync('unshare', ['-pf', 'true']).status === 0
const why = canUnshare ? '' : ' (skipped: needs root and unshare -pf, as in CI)'

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL')
})

interface Held {
  child: ChildProcess
  pid: number
  hostPid: number
}

/** A region holder in a pid namespace of its own: pid 1 there, hostPid here. */
function holdInNewNamespace(name: string, amount: number): Promise<Held> {
  const child = spawn('unshare', ['-pf', '--kill-child', process.execPath, holder, name, String(amount)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(child)
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('\n')) resolve({ child, ...JSON.parse(out) })
    })
    child.once('exit', (code) => reject(new Error(`holder exited early with ${code}`)))
  })
}

/** Waits for `check` (as waitFor does) and returns the ms it took. */
async function msUntil(check: () => boolean, timeout: number): Promise<number> {
  const start = performance.now()
  await waitFor(check, { timeout, interval: 5 })
  return performance.now() - start
}

describe.skipIf(!canUnshare)(`a member in another pid namespace${why}`, () => {
  it('is kept while it lives (3 s, five lease lifetimes), and reclaimed within 1 s of a SIGKILL', async () => {
    const name = uniqueName('pidns')
    const d = describeGauge()
    const region = SharedRegion.open(name, d.layout)
    const gauge = new LaneCounter(region, d.gauge)
    gauge.add(1)
    const held = await holdInNewNamespace(name, 100)
    expect(held.pid).toBe(1) // its own namespace's view
    expect(held.hostPid).not.toBe(1)
    expect(gauge.total()).toBe(101)

    // Never reaped while alive, whatever its pid looks like from here: checked after the reaper's passes, not a sleep,
    // over more than 3 s (seven new CPU samples, 500 ms apart; the reaper passes every 200 ms between them). A reaped
    // member never comes back with its 100: its slot, claimed again, starts empty.
    await reaperPasses(loadInfo, 6)
    expect(gauge.total()).toBe(101)
    expect(region.members().filter((m) => m.alive)).toHaveLength(2)

    process.kill(held.hostPid, 'SIGKILL')
    const waited = await msUntil(() => gauge.total() === 1, 2000)
    expect(waited).toBeLessThan(1000)
    expect(region.members().map((m) => m.pid)).toEqual([process.pid])
    region.close()
  })

  it('is reclaimed when stopped for longer than its lease, and takes its slot back when it resumes', async () => {
    const name = uniqueName('pidns-stop')
    const d = describeGauge()
    const region = SharedRegion.open(name, d.layout)
    const gauge = new LaneCounter(region, d.gauge)
    const held = await holdInNewNamespace(name, 100)
    expect(gauge.total()).toBe(100)
    process.kill(held.hostPid, 'SIGSTOP')
    // Silent from another namespace: indistinguishable from dead once its lease runs out.
    await msUntil(() => gauge.total() === 0, 2000)
    expect(region.members().map((m) => m.pid)).toEqual([process.pid])
    process.kill(held.hostPid, 'SIGCONT')
    // Its sampler finds its slot reaped and free, and claims it again: a member again, its lane given back empty.
    await msUntil(() => region.members().length === 2, 2000)
    expect(region.members().find((m) => m.pid === 1)?.alive).toBe(true)
    region.close()
  })
})

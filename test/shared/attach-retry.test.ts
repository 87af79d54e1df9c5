// An attach that waits for a region's lock while the last member removes the region starts over on the new file
// (docs/guide/foundation.md, Lifetime). Under churn that can happen many times in a row: the retries share one
// deadline (2 s) instead of a count (8 ran out in CI, with 6 processes attaching and detaching at once). Here the
// churn is made by hand, so that it happens every time: `flock` (util-linux) holds the lock of each file while the
// attacher waits on it, and the file is replaced under it before the lock is let go.
import { type ChildProcess, spawn } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import { regionLocation } from '../../lib/foundation/regions/regions'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

const dist = path.join(__dirname, '..', '..', 'dist', 'cjs')
const ROUNDS = 12 // more than the 8 tries the count allowed
const hasFlock = process.platform === 'linux' && fs.existsSync('/usr/bin/flock')

const running: ChildProcess[] = []
afterEach(() => {
  for (const c of running.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

/** A new empty region file at `file` (as an attacher that crashed before initialising it leaves one): its inode. */
function freshFile(file: string): number {
  fs.writeFileSync(file, '', { mode: 0o600, flag: 'wx' })
  return fs.statSync(file).ino
}

/** Holds the lock of the file now at `file` until release() (flock locks the open file, not the name). */
async function holdLock(file: string): Promise<{ release: () => Promise<void> }> {
  const child = spawn('flock', ['-x', file, '-c', 'echo locked; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] })
  running.push(child)
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  await waitFor(() => out.includes('locked'), { what: 'flock to hold the lock', interval: 1 })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    release: async () => {
      child.stdin!.end()
      await exited
    },
  }
}

/** Whether process `pid` has the file of inode `ino` open. */
function holdsInode(pid: number, ino: number): boolean {
  let fds: string[]
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`)
  } catch {
    return false // exited
  }
  return fds.some((fd) => {
    try {
      return fs.statSync(`/proc/${pid}/fd/${fd}`).ino === ino
    } catch {
      return false // closed meanwhile
    }
  })
}

describe('attaching while the region is removed and made again under the attacher', () => {
  it.skipIf(!hasFlock)(`attaches after ${ROUNDS} removals in a row, within the 2 s deadline`, async () => {
    const name = uniqueName('swap')
    const file = regionLocation(`swap.${name}`)
    let ino = freshFile(file)
    let holder = await holdLock(file)
    const script = `
      const { SharedRegion, RegionLayout } = require(${JSON.stringify(dist)})
      const layout = new RegionLayout('swap', 8).describe('x=1'); layout.cell()
      try {
        const region = SharedRegion.open(${JSON.stringify(name)}, layout)
        console.log('attached')
        region.close()
      } catch (error) {
        console.log(error.code + ': ' + error.message)
      }`
    const started = Date.now()
    const attacher = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    running.push(attacher)
    let said = ''
    attacher.stdout!.on('data', (d) => (said += d))
    const exited = new Promise<void>((resolve) => attacher.once('exit', () => resolve()))
    let rounds = 0
    for (; rounds < ROUNDS && said === ''; rounds++) {
      // The attacher has this file open: it waits for its lock. The last member removes the file meanwhile, and
      // a new member makes a new one and takes its lock, before the old lock is let go.
      const current = ino
      await waitFor(() => said !== '' || holdsInode(attacher.pid!, current), {
        what: `the attacher to open file ${rounds}`,
        interval: 1,
      })
      if (said !== '') break
      fs.unlinkSync(file)
      ino = freshFile(file)
      const next = await holdLock(file)
      await holder.release()
      holder = next
    }
    const swapsMs = Date.now() - started
    await holder.release()
    await exited
    fs.rmSync(file, { force: true })
    // Attached after every round, or refused only once the deadline passed: a machine so slow that the swaps
    // outlasted it.
    const attached = said.startsWith('attached')
    const outcome = attached ? `attached after ${rounds} rounds` : said
    expect(outcome).toMatch(
      new RegExp(
        `^attached after ${ROUNDS} rounds$|^ERR_BULWARK_REGION_BUSY: .*kept being removed while attaching, for 2000 ms`,
      ),
    )
    expect(attached || swapsMs >= 2000, `refused after ${swapsMs} ms`).toBe(true)
  })
})

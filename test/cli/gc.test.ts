// `bulwark gc` (issue 13 items 3 and 8, docs/guide/trust.md): it removes the caller's stale regions, by namespace if
// asked; run as root it leaves every other user's regions alone unless --all-users is given, and then each user's
// are removed by a process of that user.
import { type ChildProcess, spawn, spawnSync } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import { afterEach, describe, expect, it } from 'vitest'

import { listRegions } from '../../lib/index'
import { uniqueName } from '../helpers/unique-name'
import { cli } from '../top/top-host'

const isRoot = process.platform === 'linux' && process.getuid?.() === 0
const why = isRoot ? '' : ' (skipped: needs root, to create another Unix user with useradd; CI runs the tests as root)'

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

function gc(args: string[], as?: { uid: number; gid: number }) {
  const r = spawnSync(process.execPath, [cli, 'gc', ...args], { encoding: 'utf8', timeout: 20_000, ...as })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A process (of `as`, or of this user) that opens a shared TokenBucket in `namespace`, then is SIGKILLed: stale. */
async function leaveStale(shared: string, namespace: string, as?: { uid: number; gid: number }): Promise<void> {
  const script = `const { TokenBucket } = require(${JSON.stringify(path.resolve(__dirname, '..', '..', 'dist', 'cjs'))})
new TokenBucket({ shared: ${JSON.stringify(shared)}, namespace: ${JSON.stringify(namespace)}, rate: 1 })
process.send('open'); setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...as })
  children.push(child)
  await new Promise((resolve) => child.once('message', resolve))
  const gone = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await gone
}

describe('bulwark gc', () => {
  it('removes the stale regions of one namespace with --namespace, and of all with none', async () => {
    const shared = uniqueName('gc')
    await leaveStale(shared, 'gc-ns-a')
    await leaveStale(shared, 'gc-ns-b')
    expect(listRegions().filter((r: string) => r.endsWith(shared))).toHaveLength(2)
    const one = gc(['--namespace', 'gc-ns-a'])
    expect(one.stdout).toContain(`token-bucket.gc-ns-a.${shared}`)
    expect(one.stdout).not.toContain('gc-ns-b')
    expect(listRegions({ namespace: 'gc-ns-b' }).filter((r: string) => r.endsWith(shared))).toHaveLength(1)
    expect(gc(['--namespace', 'gc-ns-b']).stdout).toContain(`token-bucket.gc-ns-b.${shared}`)
    expect(listRegions().filter((r: string) => r.endsWith(shared))).toEqual([])
    expect(gc(['--namespace', 'not.one']).status).toBe(2)
    expect(gc(['--bogus']).status).toBe(2)
  })

  it.skipIf(!isRoot)(`run as root, leaves another user's stale regions unless --all-users${why}`, async () => {
    const name = 'bulwark-gc-other'
    const id = (flag: string) => spawnSync('id', [flag, name], { encoding: 'utf8' })
    if (id('-u').status !== 0) {
      const made = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name])
      expect(made.status, String(made.stderr)).toBe(0)
    }
    const other = { uid: Number(id('-u').stdout), gid: Number(id('-g').stdout) }
    const shared = uniqueName('gc-user')
    await leaveStale(shared, 'gc-users', other)
    const file = path.join('/dev/shm', `bulwark.${other.uid}.token-bucket.gc-users.${shared}`)
    expect(fs.existsSync(file)).toBe(true)
    // Before: root's gc removed every user's stale regions.
    expect(gc(['--namespace', 'gc-users']).stdout).toBe('nothing to remove\n')
    expect(fs.existsSync(file)).toBe(true)
    const all = gc(['--namespace', 'gc-users', '--all-users'])
    expect(all.status).toBe(0)
    expect(all.stdout).toContain(`uid ${other.uid}: removed 1: token-bucket.gc-users.${shared}`)
    expect(fs.existsSync(file)).toBe(false)
    // Only root may ask for every user's.
    expect(gc(['--all-users'], other).status).toBe(2)
  })
})

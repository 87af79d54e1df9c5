// `bulwark gc` (issue 13 items 3 and 8, docs/guide/trust.md): it removes the caller's stale regions, by namespace if
// asked; run as root it leaves every other user's regions alone unless --all-users is given, and then each user's
// are removed by a process of that user.
import { type ChildProcess, spawn, spawnSync } from 'child_process'
import * as fs from 'fs'
import * as path from 'path'
import * as os from 'os'
import { afterEach, describe, expect, it } from 'vitest'

import { listRegions } from '../../lib/index'
import { childReport } from '../../lib/ops/cli/gc-command'
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

function ensureUser(name: string): { uid: number; gid: number } {
  const id = (flag: string) => spawnSync('id', [flag, name], { encoding: 'utf8' })
  if (id('-u').status !== 0) {
    const made = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name])
    if (made.status !== 0) throw new Error(`useradd ${name} failed: ${String(made.stderr)}`)
  }
  return { uid: Number(id('-u').stdout), gid: Number(id('-g').stdout) }
}

describe('bulwark gc', () => {
  it('removes the stale regions of one namespace with --namespace, and of all with none', async () => {
    // Namespaces of this run's own, as below: a run at the same time must not remove these, nor these its.
    const [nsA, nsB] = [uniqueName('gca'), uniqueName('gcb')]
    const shared = 'stale'
    const ours = (r: string) => r.endsWith(`${nsA}.${shared}`) || r.endsWith(`${nsB}.${shared}`)
    await leaveStale(shared, nsA)
    await leaveStale(shared, nsB)
    expect(listRegions().filter(ours)).toHaveLength(2)
    const one = gc(['--namespace', nsA])
    expect(one.stdout).toContain(`token-bucket.${nsA}.${shared}`)
    expect(one.stdout).not.toContain(nsB)
    expect(listRegions({ namespace: nsB }).filter((r: string) => r.endsWith(shared))).toHaveLength(1)
    expect(gc(['--namespace', nsB]).stdout).toContain(`token-bucket.${nsB}.${shared}`)
    expect(listRegions().filter(ours)).toEqual([])
    expect(gc(['--namespace', 'not.one']).status).toBe(2)
    expect(gc(['--bogus']).status).toBe(2)
  })

  it.skipIf(!isRoot)(`run as root, leaves another user's stale regions unless --all-users${why}`, async () => {
    const name = 'bulwark-gc-other'
    const other = ensureUser(name)
    // A namespace of this run's own: another test run at the same time (CI runs each Node major in turn, developers
    // run suites side by side) may have stale regions of that user too, and they are not this test's to count.
    const namespace = uniqueName('gcu')
    const shared = 'stale'
    await leaveStale(shared, namespace, other)
    const file = path.join('/dev/shm', `bulwark.${other.uid}.token-bucket.${namespace}.${shared}`)
    expect(fs.existsSync(file)).toBe(true)
    // Before: root's gc removed every user's stale regions.
    expect(gc(['--namespace', namespace]).stdout).toBe('nothing to remove\n')
    expect(fs.existsSync(file)).toBe(true)
    const all = gc(['--namespace', namespace, '--all-users'])
    expect(all.status).toBe(0)
    expect(all.stdout).toContain(
      `uid ${other.uid} (${name}, gid ${other.gid}): removed 1: token-bucket.${namespace}.${shared}\n`,
    )
    expect(fs.existsSync(file)).toBe(false)
    // Only root may ask for every user's.
    expect(gc(['--all-users'], other).status).toBe(2)
  })

  // Issue 32, item 8: --all-users followed links (statSync) and ran each user's gc with the group of a file.
  it.skipIf(!isRoot)(`--all-users takes each user from the user database, never from a file or a link${why}`, () => {
    const other = ensureUser('bulwark-gc-other')
    const linked = ensureUser('bulwark-gc-link') // a user with no region of theirs
    const ghost = 4_000_000_123 // a uid no user has
    const namespace = uniqueName('gcl')
    const made: string[] = []
    const plant = (file: string, uid: number, gid: number) => {
      fs.writeFileSync(file, '')
      fs.chownSync(file, uid, gid)
      made.push(file)
    }
    try {
      // That user's file, with root's group: a file's group says nothing of whom its owner is.
      plant(`/dev/shm/bulwark.${other.uid}.token-bucket.${namespace}.planted`, other.uid, 0)
      // A link, made by someone else, named for a user and pointing to a file of theirs.
      const target = path.join(os.tmpdir(), `${namespace}-target`)
      plant(target, linked.uid, 0)
      const link = `/dev/shm/bulwark.${linked.uid}.token-bucket.${namespace}.link`
      fs.symlinkSync(target, link)
      made.push(link)
      plant(`/dev/shm/bulwark.${ghost}.token-bucket.${namespace}.ghost`, ghost, ghost)
      const all = gc(['--namespace', namespace, '--all-users'])
      expect(all.stdout).toContain(`uid ${other.uid} (bulwark-gc-other, gid ${other.gid}): `) // before: gid 0
      expect(all.stdout).not.toContain(`uid ${linked.uid}`) // before: run as that user, for a link
      expect(all.stdout).toContain(`uid ${ghost}: no such user in the user database; its regions are left alone\n`)
    } finally {
      for (const file of made) fs.rmSync(file, { force: true })
    }
  })

  it("escapes what each user's gc printed before root's terminal shows it", () => {
    const account = { uid: 1000, gid: 1000, name: 'someone', home: '/' }
    const report = childReport(account, { stdout: 'removed 1: x\u001b]0;owned\u0007\u009b2J\n', stderr: '', status: 0 })
    expect(report).toBe('uid 1000 (someone, gid 1000): removed 1: x\\u001b]0;owned\\u0007\\u009b2J\n')
  })
})

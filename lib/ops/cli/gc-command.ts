import { spawnSync, type SpawnSyncReturns } from 'child_process'
import { lstatSync, readdirSync, readFileSync } from 'fs'
import * as path from 'path'

import { printableLines } from '../top/printable'
import { checkNamespace, splitRegionName } from '../../foundation/regions/namespace'
import { removeStaleRegions } from '../../foundation/regions/regions'

export const GC_USAGE = `Usage: bulwark gc [--namespace <namespace>] [--all-users]

Removes the shared regions of the calling user that no live process uses (left behind by killed processes).
  --namespace <ns>  only the regions of that application namespace
  --all-users       (root only) also every other user's, each cleaned by a process running as that user`

// Where Linux keeps the region files (native/core/platform/region_store_linux.cc): bulwark.<uid>.<kind>.<name>.
const REGION_DIRECTORY = '/dev/shm'
const REGION_FILE = /^bulwark\.(\d{1,10})\./
// The longest one user's gc may take: a process of that user must not hold root's command for ever.
const CHILD_TIMEOUT_MS = 30_000

interface GcArgs {
  namespace: string | undefined
  allUsers: boolean
}

function parseGcArgs(args: readonly string[]): GcArgs {
  let namespace: string | undefined
  let allUsers = false
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--all-users') allUsers = true
    else if (args[i] === '--namespace') namespace = checkNamespace('--namespace', args[++i])
    else throw new Error(`unknown argument '${args[i]}'`)
  }
  return { namespace, allUsers }
}

/** A user as the system's user database knows it. */
export interface Account {
  uid: number
  gid: number
  name: string
  home: string
}

/** `uid`'s passwd entry (getent: local files, LDAP, whatever NSS serves; else /etc/passwd), or undefined. */
export function accountOf(uid: number): Account | undefined {
  const r = spawnSync('getent', ['passwd', String(uid)], { encoding: 'utf8', timeout: 5000 })
  let line: string | undefined
  if (r.error === undefined) line = r.status === 0 ? r.stdout.split('\n')[0] : undefined
  else {
    try {
      line = readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .find((l) => l.split(':')[2] === String(uid))
    } catch {
      line = undefined
    }
  }
  const [name, , id, gid, , home] = (line ?? '').split(':')
  if (Number(id) !== uid || !/^\d+$/.test(gid ?? '')) return undefined
  return { uid, gid: Number(gid), name, home: home || '/' }
}

/**
 * The other users with region files: a regular file (lstat: a link is never followed) owned by the uid its name
 * carries. A file another user planted, or a link to anyone's file, is not gc's to act on.
 */
export function otherUids(): number[] {
  const uids = new Set<number>()
  let files: string[]
  try {
    files = readdirSync(REGION_DIRECTORY)
  } catch {
    return [] // no such directory: not Linux, nothing to clean here
  }
  for (const file of files) {
    const uid = Number(REGION_FILE.exec(file)?.[1] ?? NaN)
    if (!(uid >= 0 && uid < 2 ** 32) || uid === process.getuid?.() || uids.has(uid)) continue
    try {
      const st = lstatSync(path.join(REGION_DIRECTORY, file))
      if (st.isFile() && st.uid === uid) uids.add(uid)
    } catch {
      // Gone meanwhile.
    }
  }
  return [...uids].sort((a, b) => a - b)
}

/** What one user's gc printed, as root's terminal shows it: escaped, since that user's process wrote it. */
export function childReport(account: Account, r: Pick<SpawnSyncReturns<string>, 'stdout' | 'stderr' | 'status'>) {
  const said = r.stdout || r.stderr || `exit ${r.status ?? 'by a signal (timed out?)'}\n`
  return printableLines(`uid ${account.uid} (${account.name}, gid ${account.gid}): ${said}`)
}

/** `bulwark gc`: resolves with the exit code. */
export function runGc(args: readonly string[]): number {
  const { namespace, allUsers } = parseGcArgs(args)
  if (allUsers && process.getuid?.() !== 0) {
    process.stderr.write("bulwark gc: --all-users is for root (every user's regions are only theirs to remove)\n")
    return 2
  }
  const removed = removeStaleRegions(
    namespace === undefined ? undefined : (name) => splitRegionName(name).namespace === namespace,
  )
  process.stdout.write(removed.length ? `removed ${removed.length}: ${removed.join(', ')}\n` : 'nothing to remove\n')
  if (!allUsers) return 0
  const again = namespace === undefined ? ['gc'] : ['gc', '--namespace', namespace]
  let code = 0
  for (const uid of otherUids()) {
    // Each user's regions are removed by a process of that user, as the user database has it (not as a file says):
    // root never maps them (docs/guide/trust.md), and hands that process nothing of its own environment.
    const account = accountOf(uid)
    if (account === undefined) {
      process.stdout.write(`uid ${uid}: no such user in the user database; its regions are left alone\n`)
      continue
    }
    const r = spawnSync(process.execPath, [path.join(__dirname, 'bulwark.js'), ...again], {
      uid: account.uid,
      gid: account.gid,
      cwd: '/',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: account.home, LANG: 'C.UTF-8' },
      encoding: 'utf8',
      timeout: CHILD_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    })
    process.stdout.write(childReport(account, r))
    if (r.status !== 0) code = 1
  }
  return code
}

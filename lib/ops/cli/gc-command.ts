import { spawnSync } from 'child_process'
import { readdirSync, statSync } from 'fs'
import * as path from 'path'

import { checkNamespace, splitRegionName } from '../../foundation/regions/namespace'
import { removeStaleRegions } from '../../foundation/regions/regions'

export const GC_USAGE = `Usage: bulwark gc [--namespace <namespace>] [--all-users]

Removes the shared regions of the calling user that no live process uses (left behind by killed processes).
  --namespace <ns>  only the regions of that application namespace
  --all-users       (root only) also every other user's, each cleaned by a process running as that user`

// Where Linux keeps the region files (native/core/platform/region_store_linux.cc): bulwark.<uid>.<kind>.<name>.
const REGION_DIRECTORY = '/dev/shm'
const REGION_FILE = /^bulwark\.(\d+)\./

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

/**
 * The owners (uid -> gid) of the other users' region files. A file whose owner is not the uid its name carries
 * was planted by someone else: not gc's to touch.
 */
function otherOwners(): Map<number, number> {
  const owners = new Map<number, number>()
  let files: string[]
  try {
    files = readdirSync(REGION_DIRECTORY)
  } catch {
    return owners // no such directory: not Linux, nothing to clean here
  }
  for (const file of files) {
    const uid = Number(REGION_FILE.exec(file)?.[1] ?? NaN)
    if (!(uid >= 0) || uid === process.getuid?.() || owners.has(uid)) continue
    try {
      const st = statSync(path.join(REGION_DIRECTORY, file))
      if (st.uid === uid) owners.set(uid, st.gid)
    } catch {
      // Gone meanwhile.
    }
  }
  return owners
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
  for (const [uid, gid] of otherOwners()) {
    // Each user's regions are removed by a process of that user: root never maps them (docs/guide/trust.md).
    const r = spawnSync(process.execPath, [path.join(__dirname, 'bulwark.js'), ...again], {
      uid,
      gid,
      encoding: 'utf8',
    })
    process.stdout.write(`uid ${uid}: ${r.stdout || r.stderr || `exit ${r.status}\n`}`)
    if (r.status !== 0) code = 1
  }
  return code
}

import { existsSync, readFileSync, realpathSync, statSync } from 'fs'
import { basename, dirname, join, resolve, sep } from 'path'

import { sha256 } from '../common/sha256'
import { InvalidOptionError } from '../errors/invalid-option-error'

/** The environment variable that sets the namespace of every component of a process that names none. */
export const NAMESPACE_ENV = 'BULWARK_NAMESPACE'

// A namespace is one segment of a region's name (`<kind>.<namespace>.<shared>`): no dots, so tools split it back.
const namespacePattern = /^[A-Za-z0-9_-]{1,40}$/

/** Checks a namespace given as an option (or, with field BULWARK_NAMESPACE, in the environment). */
export function checkNamespace(field: string, value: unknown): string {
  if (typeof value !== 'string' || !namespacePattern.test(value)) {
    throw new InvalidOptionError(field, value, 'a namespace of 1-40 characters from A-Z a-z 0-9 _ -')
  }
  return value
}

/**
 * The application's root directory: where its entry script's package.json is (for a script run from a package's
 * node_modules, such as a test runner or a process manager installed in the project, the project holding that
 * node_modules); the entry script's directory if no package.json is above it; the working directory when there is
 * no entry script (a REPL, `node -e`).
 */
export function applicationRoot(entry: string | undefined = process.argv[1], cwd: string = process.cwd()): string {
  if (entry === undefined || entry === '') return cwd
  let file = resolve(cwd, entry)
  try {
    file = realpathSync(file)
  } catch {
    // A script that is gone (or never was a file): its path as given still names the application.
  }
  const inModules = file.indexOf(`${sep}node_modules${sep}`)
  if (inModules >= 0) return file.slice(0, inModules) || sep
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    if (dirname(dir) === dir) return dirname(file)
  }
}

/** The `name` in `root`'s package.json, or undefined (none, unreadable, or not a string). */
function packageName(root: string): string | undefined {
  try {
    const name = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name?: unknown }).name
    return typeof name === 'string' && name !== '' ? name : undefined
  } catch {
    return undefined
  }
}

/**
 * Which directory `root` is on this host: its device and inode. Two containers' `/app` are two directories (each
 * its own filesystem or bind mount), while an application's processes, and its versions deployed in place, see one.
 */
function directoryIdentity(root: string): string {
  try {
    const st = statSync(root, { bigint: true })
    return `${st.dev}:${st.ino}`
  } catch {
    return ''
  }
}

/**
 * The namespace derived from an application root (docs/guide/trust.md): its package's name (else the directory's),
 * made safe, and a hash of its path, its package's name and the directory's identity, none of which a new version
 * changes: two applications run from the same path (`/app` in two containers sharing /dev/shm) keep apart.
 */
export function namespaceOfRoot(root: string): string {
  const name = packageName(root)
  const readable =
    (name ?? basename(root))
      .replace(/^@/, '')
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(0, 24) || 'root'
  const identity = `${root}\0${name ?? ''}\0${directoryIdentity(root)}`
  const hash = sha256(identity, 'hex').slice(0, 8)
  return `${readable}-${hash}`
}

let derived: string | undefined

/**
 * The namespace of a component that names none (docs/guide/trust.md): BULWARK_NAMESPACE when set, else the one
 * derived from the application's root, so that the threads and the cluster workers of one application share and
 * another application of the same user does not.
 */
export function defaultNamespace(): string {
  const fromEnv = process.env[NAMESPACE_ENV]
  if (fromEnv !== undefined && fromEnv !== '') return checkNamespace(NAMESPACE_ENV, fromEnv)
  derived ??= namespaceOfRoot(applicationRoot())
  return derived
}

/** A region's name as listed (`listRegions()`): `<kind>.<namespace>.<shared>`, split (namespace '' if it has none). */
export function splitRegionName(region: string): { kind: string; namespace: string; shared: string } {
  const first = region.indexOf('.')
  const second = region.indexOf('.', first + 1)
  if (first < 0) return { kind: region, namespace: '', shared: '' }
  if (second < 0) return { kind: region.slice(0, first), namespace: '', shared: region.slice(first + 1) }
  return {
    kind: region.slice(0, first),
    namespace: region.slice(first + 1, second),
    shared: region.slice(second + 1),
  }
}

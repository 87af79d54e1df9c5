import { InvalidArgumentError } from '../errors/invalid-argument-error'
import { native } from '../native/load-native'
import { checkNamespace, splitRegionName } from './namespace'
import { toRegionError } from './region-errors'

/**
 * Names of this user's bulwark regions on this host, `<kind>.<namespace>.<shared>` for a component's region (see
 * `splitRegionName`): files in /dev/shm on Linux, in the user's temporary directory on macOS, named sections of the
 * logon session on Windows. With `namespace`, only that application's (docs/guide/trust.md).
 */
export function listRegions(options?: { namespace?: string }): string[] {
  const all = native.regionList().sort()
  if (options === undefined || options.namespace === undefined) return all
  const namespace = checkNamespace('namespace', options.namespace)
  return all.filter((name) => splitRegionName(name).namespace === namespace)
}

// A listed region name: its kind (no dots, as native/core/region/region_names.cc takes it), a dot, then its name.
const listedNamePattern = /^[A-Za-z0-9_-]{1,31}\.[A-Za-z0-9._-]{1,200}$/

/** Checks a region name given to the functions below: `<kind>.<name>`, as `listRegions()` gives it. */
function checkListedName(name: unknown): string {
  if (typeof name !== 'string' || !listedNamePattern.test(name)) {
    throw new InvalidArgumentError(
      'name',
      name,
      'a region name `<kind>.<name>` as listRegions() gives (A-Z a-z 0-9 . _ -)',
    )
  }
  return name
}

/** Where the region `name` (`<kind>.<name>`) lives: its file, or its object name on Windows. */
export function regionLocation(name: string): string {
  checkListedName(name)
  try {
    return native.regionLocation(name)
  } catch (error) {
    throw toRegionError(name, error)
  }
}

/**
 * Removes a region's name from the host. Processes attached keep their memory; new attachers get a fresh region.
 * For operators cleaning up after a crash; bulwark removes regions itself when their last member leaves.
 */
export function removeRegion(name: string): void {
  checkListedName(name)
  try {
    native.regionUnlink(name)
  } catch (error) {
    throw toRegionError(name, error)
  }
}

/**
 * Removes the regions that no live process uses any more (left behind by processes that were all killed, which
 * never detached). Safe while the host runs: a region with a live member, or being attached, is kept. Returns the
 * names removed. `bulwark gc` runs it. `filter` limits it to the names it accepts.
 */
export function removeStaleRegions(filter?: (name: string) => boolean): string[] {
  if (filter !== undefined && typeof filter !== 'function')
    throw new InvalidArgumentError('filter', filter, 'a function of a region name')
  const removed: string[] = []
  for (const name of native.regionList()) {
    if (filter !== undefined && !filter(name)) continue
    try {
      if (native.regionRemoveIfStale(name)) removed.push(name)
    } catch {
      // A corrupt or foreign file is not ours to judge: leave it for removeRegion().
    }
  }
  return removed.sort()
}

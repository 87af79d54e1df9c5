import { checkSharedName } from '../validate'
import { native } from '../native/load-native'

/** Names of the bulwark regions present on this host (in /dev/shm). */
export function listRegions(): string[] {
  return native.regionList().sort()
}

/**
 * Removes a region's name from the host. Processes attached keep their memory; new attachers get a fresh region.
 * For operators cleaning up after a crash; bulwark removes regions itself when their last member leaves.
 */
export function removeRegion(name: string): void {
  native.regionUnlink(checkSharedName('name', name))
}

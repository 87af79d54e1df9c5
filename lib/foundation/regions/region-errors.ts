import { RegionCorruptError } from '../errors/region-corrupt-error'
import { RegionMismatchError } from '../errors/region-mismatch-error'
import { RegionOwnerError } from '../errors/region-owner-error'
import { SharedMemoryError } from '../errors/shared-memory-error'

/** The typed error for a native region failure (an Error with a `code`), or the error itself when it has none. */
export function toRegionError(name: string, error: unknown): Error {
  const { code, location, owner } = error as { code?: string; location?: string; owner?: number }
  const message = error instanceof Error ? error.message : String(error)
  switch (code) {
    case 'ERR_BULWARK_REGION_OWNER':
      return new RegionOwnerError(name, message, location ?? '', owner ?? -1)
    case 'ERR_BULWARK_REGION_MISMATCH':
      return new RegionMismatchError(name, message)
    case 'ERR_BULWARK_REGION_CORRUPT':
      return new RegionCorruptError(name, message)
    case 'ERR_BULWARK_REGION_BUSY':
    case 'ERR_BULWARK_REGION_FULL':
    case 'ERR_BULWARK_SYSTEM':
      return new SharedMemoryError(code, name, message)
    default:
      return error instanceof Error ? error : new Error(message)
  }
}

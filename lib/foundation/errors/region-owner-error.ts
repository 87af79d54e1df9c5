import { BulwarkError } from './bulwark-error'

/**
 * A region's file (or object) is not this user's to map: another user made it first, or group or others may open it,
 * or it is not a regular file. bulwark never maps such a region; `file` names it and `owner` is its owner's uid
 * (-1 when unknown). The owner, or root, can remove it. On Windows the same for a named section or its lock
 * (`Local\…`, `Local\….lock`) that another account owns or may open: `owner` is the last number of the owner's SID.
 */
export class RegionOwnerError extends BulwarkError {
  readonly region: string
  readonly file: string
  readonly owner: number

  constructor(region: string, message: string, file: string, owner: number) {
    super('ERR_BULWARK_REGION_OWNER', message)
    this.region = region
    this.file = file
    this.owner = owner
  }
}

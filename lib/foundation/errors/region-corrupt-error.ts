import { BulwarkError } from './bulwark-error'

/** A shared region's bytes are not a valid bulwark region (truncated, overwritten, or not ours). */
export class RegionCorruptError extends BulwarkError {
  readonly region: string

  constructor(region: string, message: string) {
    super('ERR_BULWARK_REGION_CORRUPT', message)
    this.region = region
  }
}

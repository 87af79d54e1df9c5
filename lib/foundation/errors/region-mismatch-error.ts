import { BulwarkError } from './bulwark-error'

/**
 * A shared region with this name is in use by live processes with another layout version, size or configuration
 * (for example two versions of bulwark meeting in a rolling deploy). Nothing was attached and nothing was changed.
 */
export class RegionMismatchError extends BulwarkError {
  readonly region: string

  constructor(region: string, message: string) {
    super('ERR_BULWARK_REGION_MISMATCH', message)
    this.region = region
  }
}

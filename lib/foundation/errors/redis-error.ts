import { BulwarkError } from './bulwark-error'

/**
 * A Redis call of RedisRateLimiter failed (its decisions went to insurance), as told by `onError`: the client's
 * rejection, an unexpected reply from the script, or scripts that could not be loaded. The client's own error, if
 * any, is `cause`.
 */
export class RedisError extends BulwarkError {
  constructor(message: string, cause?: unknown) {
    super('ERR_BULWARK_REDIS', message)
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause
  }
}

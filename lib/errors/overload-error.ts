import { BulwarkError } from './bulwark-error'

/**
 * A limiter shed the call: the host is saturated (`in-flight`), its event loop is queueing (`queue-delay`), or
 * the requests it waits on are queueing downstream (`latency`).
 */
export class OverloadError extends BulwarkError {
  readonly reason: 'in-flight' | 'queue-delay' | 'latency'

  constructor(reason: 'in-flight' | 'queue-delay' | 'latency') {
    super('ERR_BULWARK_OVERLOAD', `shed by the limiter (${reason})`)
    this.reason = reason
  }
}

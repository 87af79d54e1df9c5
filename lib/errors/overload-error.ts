import { BulwarkError } from './bulwark-error'

/** A limiter shed the call: the host is saturated (`in-flight`) or its event loop is queueing (`queue-delay`). */
export class OverloadError extends BulwarkError {
  readonly reason: 'in-flight' | 'queue-delay'

  constructor(reason: 'in-flight' | 'queue-delay') {
    super('ERR_BULWARK_OVERLOAD', `shed by the limiter (${reason})`)
    this.reason = reason
  }
}

import type { ShedReason } from './shed'
import { BulwarkError } from './bulwark-error'

/**
 * A limiter shed the call. `reason` says which rule (docs/vocabulary.md, "Shed codes and reasons"); `retryAfter`
 * is how long the caller should wait before trying again, in whole seconds, as in the HTTP Retry-After header.
 * Built without a stack trace: it is an expected answer that an overload produces at full request rate, and a
 * stack capture costs microseconds.
 */
export class OverloadError extends BulwarkError {
  readonly reason: ShedReason
  /** Seconds to wait before trying again, rounded up (0 when it cannot be known). */
  readonly retryAfter: number

  constructor(reason: ShedReason, retryAfter = 0) {
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    try {
      super('ERR_BULWARK_OVERLOAD', `shed by the limiter (${reason})`)
    } finally {
      Error.stackTraceLimit = limit
    }
    this.reason = reason
    this.retryAfter = retryAfter > 0 ? Math.ceil(retryAfter) : 0
  }
}

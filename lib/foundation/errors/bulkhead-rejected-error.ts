import { BulwarkError } from './bulwark-error'

/**
 * An upstream's adaptive bulkhead refused the call without sending it: the upstream is saturated (its requests in
 * flight are at the limit learned from its latency). The call did not wait; the other upstreams are unaffected.
 * Built without a stack trace, like every refusal an overload produces at full request rate.
 */
export class BulkheadRejectedError extends BulwarkError {
  /** The upstream: an origin (`http://host:port`) or a gRPC target. */
  readonly upstream: string
  /** The rule that refused (the Shed reason). */
  readonly reason: 'latency'
  /** Seconds the caller should wait before trying again (0: cannot be known). */
  readonly retryAfter: number

  constructor(upstream: string, retryAfter = 0) {
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    try {
      super('ERR_BULWARK_BULKHEAD_REJECTED', `the bulkhead of ${upstream} is full (its latency says it is saturated)`)
    } finally {
      Error.stackTraceLimit = limit
    }
    this.upstream = upstream
    this.reason = 'latency'
    this.retryAfter = retryAfter > 0 ? Math.ceil(retryAfter) : 0
  }
}

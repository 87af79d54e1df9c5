import { BulwarkError } from './bulwark-error'

/**
 * A breaker refused the call: the downstream it guards is failing. Built without a stack trace, because it is an
 * expected answer that an outage produces at full request rate, and a stack capture costs microseconds.
 */
export class BreakerOpenError extends BulwarkError {
  /** The breaker's `shared` name (or the key it guards), when it has one. */
  readonly breaker: string | undefined
  /** Seconds until the breaker lets a probe through, rounded up (0 when that is now or cannot be known). */
  readonly retryAfter: number
  /** True when an operator's switch forces the breaker open (Shed.forced's reason, docs/guide/degrade.md). */
  readonly forced: boolean

  constructor(breaker: string | undefined, retryAfter = 0, forced = false) {
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    try {
      super(
        'ERR_BULWARK_BREAKER_OPEN',
        `${breaker === undefined ? 'the breaker' : `the breaker "${breaker}"`} is ${forced ? 'forced open' : 'open'}`,
      )
    } finally {
      Error.stackTraceLimit = limit
    }
    this.breaker = breaker
    this.retryAfter = retryAfter > 0 ? Math.ceil(retryAfter) : 0
    this.forced = forced
  }
}

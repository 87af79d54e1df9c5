import type { PriorityName } from '../../../admission/priority'
import { InvalidArgumentError } from '../../../foundation/errors/invalid-argument-error'

/** How long and how a caller of `acquire` or `reserve` waits for its permits (docs/guide/ratelimit.md, "Waiting"). */
export interface AcquireOptions {
  /** Gives the caller's place up at once when aborted: the promise rejects with AbortedError. */
  signal?: AbortSignal
  /**
   * The longest the caller waits, ms (default 30 000; 0: take now or refuse at once, OverloadError 'rate-limit').
   * Past it the promise rejects with OverloadError (reason 'queue-timeout').
   */
  maxWait?: number
  /** Served before lower classes, FIFO within a class (Priority: 0 critical .. 3 low, or its name; default normal). */
  priority?: number | PriorityName
}

/** The default `maxWait`, ms: every wait is bounded (docs/guide/trust.md). */
export const DEFAULT_MAX_WAIT = 30_000
/** The longest `maxWait` accepted, ms (a timer cannot be set further out). */
export const MAX_WAIT_LIMIT = 2 ** 31 - 1

const PRIORITY_BY_NAME: Record<string, number> = { critical: 0, high: 1, normal: 2, low: 3 }

/** The class of a priority argument; a bad one is an InvalidArgumentError (waiting is not a hot path). */
export function priorityClass(value: unknown): number {
  if (value === undefined) return 2
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 3) return value
  if (typeof value === 'string' && Object.prototype.hasOwnProperty.call(PRIORITY_BY_NAME, value)) {
    return PRIORITY_BY_NAME[value]
  }
  throw new InvalidArgumentError('priority', value, "a Priority: 0..3, or 'critical', 'high', 'normal', 'low'")
}

/** Checks an AcquireOptions argument; returns maxWait (ms). */
export function checkAcquireOptions(options: AcquireOptions | undefined): number {
  if (options === undefined) return DEFAULT_MAX_WAIT
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('options', options, 'an object: { signal?, maxWait?, priority? }')
  }
  const { maxWait, signal } = options
  if (signal !== undefined && !isSignal(signal)) throw new InvalidArgumentError('signal', signal, 'an AbortSignal')
  if (maxWait === undefined) return DEFAULT_MAX_WAIT
  if (typeof maxWait !== 'number' || !(maxWait >= 0 && maxWait <= MAX_WAIT_LIMIT)) {
    throw new InvalidArgumentError('maxWait', maxWait, `a number of ms in [0, ${MAX_WAIT_LIMIT}]`)
  }
  return maxWait
}

function isSignal(value: unknown): value is AbortSignal {
  const s = value as { aborted?: unknown; addEventListener?: unknown } | null
  return (
    typeof s === 'object' && s !== null && typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function'
  )
}

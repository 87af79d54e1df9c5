/**
 * Why a request was refused: every admission in bulwark that answers with a token (>= 0 admitted) answers a refusal
 * with one of these negative codes, and each code has one reason string (docs/vocabulary.md, "Shed codes and
 * reasons"). A new reason takes the next code here first, even before its rule exists.
 */
export const Shed = {
  /** BBR: in flight over `maxPass * minRt` while the load is over its threshold. */
  inFlight: -1,
  /** BBR: the event loop's queueing delay stayed over target. */
  queueDelay: -2,
  /** A rate limit in a guard (HTTP 429), hot-parameter limits included. */
  rateLimit: -3,
  /** The adaptive concurrency check: in flight over the limit learned from latency. */
  latency: -4,
  /** Per-key concurrency: the key already has its requests in flight. */
  keyConcurrency: -5,
  /** The request's remaining deadline is shorter than its expected service time. */
  deadline: -6,
  /** An operator's switch forces shedding. */
  forced: -7,
  /** Waited `maxWait` in the admission queue without a slot. */
  queueTimeout: -8,
  /** Per-connection concurrency: the request's connection (an HTTP/2 session) already holds its requests in flight. */
  connectionConcurrency: -9,
  /** An access list denies the request's address or key (HTTP 403). */
  denied: -10,
  /** The request's key is banned for refusals that came too fast (HTTP 429 until the ban ends). */
  banned: -11,
} as const

export type ShedCode = (typeof Shed)[keyof typeof Shed]

export type ShedReason =
  | 'in-flight'
  | 'queue-delay'
  | 'rate-limit'
  | 'latency'
  | 'key-concurrency'
  | 'deadline'
  | 'forced'
  | 'queue-timeout'
  | 'connection-concurrency'
  | 'denied'
  | 'banned'

// Index -code: the reason of each code, made once.
const REASONS: readonly (ShedReason | undefined)[] = [
  undefined,
  'in-flight',
  'queue-delay',
  'rate-limit',
  'latency',
  'key-concurrency',
  'deadline',
  'forced',
  'queue-timeout',
  'connection-concurrency',
  'denied',
  'banned',
]

/** The reason of a shed code, or undefined for anything that is not one (an admitted token, say). Never throws. */
export function shedReason(code: number): ShedReason | undefined {
  return typeof code === 'number' && code < 0 ? REASONS[-code] : undefined
}

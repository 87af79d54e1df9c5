import type { RuleStats } from '../../../foundation/live-rules/live-rules'

/** Where decisions are going: 'redis', or 'insurance' while Redis is skipped after failures. */
export type RedisLimiterState = 'redis' | 'insurance'

/** What RedisRateLimiter.stats() returns: counts since it was made, and what is pending now. */
export interface RedisRateLimiterStats {
  state: RedisLimiterState
  /** Decisions Redis made. */
  redis: number
  /** Decisions refused on this host because Redis had just refused or emptied the key (source 'local'). */
  local: number
  /** Decisions the insurance limiter made. */
  insurance: number
  /** Decisions Redis did not answer within `timeout`. */
  timeouts: number
  /** Decisions whose script call failed (a Redis error, a reply that is not the script's). */
  errors: number
  /** Decisions that found the client not ready (disconnected, reconnecting, never connected). */
  notReady: number
  /** Script calls sent to Redis; each carries one or more decisions. */
  calls: number
  /** Decisions waiting for Redis now. */
  pending: number
  /** Keys refused locally now. */
  refusedKeys: number
  /** The live rule: its version (0 until `configure` first changed it) and values (limit, window, and burst for GCRA). */
  rules: RuleStats
}

/** What every local rate limiter offers; KeyedLimiter and RedisRateLimiter's insurance work with any of them. */
export interface Limiter {
  /** Takes `n` permits (default 1) if they are available now. Never throws (a bad `n` is refused), never allocates. */
  tryAcquire(n?: number): boolean
  /** Permits available now (may be fractional for a token bucket). */
  available(): number
  /** Milliseconds until `n` permits could be available if nobody else takes any; Infinity if never. */
  retryAfterMs(n?: number): number
  /** Detaches from shared memory (a no-op for a local limiter). Idempotent. */
  close(): void
}

import type { KeyedLimiter } from '../keyed-limiter'
import type { Limiter } from '../limiter'
import type { RateLimitDecision } from './pending-decision'
import { type ResolvedRedisOptions, resolveInsurance } from './redis-options'

/**
 * The local limiter that decides while Redis cannot: the application's, or by default one per key at this host's
 * share of the limit, made again when a live rule changes the limit.
 */
export class RedisInsurance {
  limiter: KeyedLimiter<Limiter>
  private readonly own: boolean

  constructor(value: unknown, o: ResolvedRedisOptions) {
    this.own = value === undefined
    this.limiter = resolveInsurance(value, o)
  }

  /** A new rule: the default limiter is made again for it (keys start afresh, as they do in Redis). */
  renew(o: ResolvedRedisOptions): void {
    if (!this.own) return
    const old = this.limiter
    this.limiter = resolveInsurance(undefined, o)
    old.close()
  }

  decide(key: string, n: number): RateLimitDecision {
    const limiter = this.limiter.get(key)
    // No room for a new key in the insurance limiter (every key in it still refilling): the key is limited.
    if (limiter === undefined)
      return { allowed: false, remaining: 0, retryAfterMs: this.limiter.retryAfterMs(key, n), source: 'insurance' }
    const allowed = limiter.tryAcquire(n)
    return {
      allowed,
      remaining: Math.floor(limiter.available()),
      retryAfterMs: allowed ? 0 : limiter.retryAfterMs(n),
      source: 'insurance',
    }
  }
}

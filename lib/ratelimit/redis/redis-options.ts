import { InvalidOptionError } from '../../errors/invalid-option-error'
import type { Clock } from '../../signals/clock'
import { checkNumber, checkOneOf, checkOptions, optionalFunction, optionalNumber } from '../../validate'
import { KeyedLimiter } from '../keyed-limiter'
import type { Limiter } from '../limiter'
import { SlidingWindowLimiter } from '../sliding-window-limiter'
import { TokenBucket } from '../token-bucket'

/**
 * The part of a Redis client the limiter uses: ioredis (`Redis` or `Cluster`) fits as it is. `status`, when
 * present, is read before each call: anything but 'ready' (or 'wait', a lazy client not yet connected) sends the
 * decision to the insurance limiter at once instead of into the client's offline queue.
 */
export interface RedisScriptClient {
  evalsha(sha: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
  readonly status?: string
}

export type RedisAlgorithm = 'sliding-window' | 'gcra'

export interface RedisRateLimiterOptions {
  /** An ioredis client (or cluster) you own: the limiter never connects or closes it. */
  redis: RedisScriptClient
  /** Permits per window, for the whole fleet (> 0). */
  limit: number
  /** Window length, ms (> 0). */
  window: number
  /** Prefix of every key (default 'bulwark:rl:'); no braces, the key itself becomes the cluster hash tag. */
  keyPrefix?: string
  /** 'sliding-window' (default): the weighted two-window counter. 'gcra': a token bucket of `burst`, refilled at limit / window. */
  algorithm?: RedisAlgorithm
  /** GCRA only: the most permits available at once (default `limit`). */
  burst?: number
  /** Longest a decision waits for Redis, ms (default 50); then the insurance limiter decides. */
  timeout?: number
  /** Hosts sharing the limit: the default insurance limiter allows each host limit / hosts (default 1). */
  hosts?: number
  /** Decides while Redis is down or slow (default: per key, a local limiter of the same kind at limit / hosts). */
  insurance?: KeyedLimiter<Limiter>
  /** Failures in a row (errors or timeouts) after which Redis is skipped and only probed (default 3). */
  openAfter?: number
  /** While Redis is skipped, one decision this often (ms, default 1000) is tried on it as a probe. */
  probeInterval?: number
  /**
   * A clock in ms that replaces the Redis server's clock in the scripts and drives the probe timing (tests).
   * By default the scripts read Redis TIME, so that the hosts' clocks need not agree.
   */
  now?: Clock
}

export interface ResolvedRedisOptions {
  redis: RedisScriptClient
  limit: number
  window: number
  keyPrefix: string
  algorithm: RedisAlgorithm
  burst: number
  timeout: number
  hosts: number
  openAfter: number
  probeInterval: number
  now: Clock | undefined
}

const MAX_WINDOW = 365 * 86_400_000

export function resolveRedisOptions(options: unknown): ResolvedRedisOptions {
  const o = checkOptions<RedisRateLimiterOptions>(options, 'options')
  const redis = o.redis as Partial<RedisScriptClient> | undefined
  if (
    redis === null ||
    typeof redis !== 'object' ||
    typeof redis.evalsha !== 'function' ||
    typeof redis.eval !== 'function'
  ) {
    throw new InvalidOptionError('redis', o.redis, 'an ioredis client (an object with evalsha and eval)')
  }
  const limit = checkNumber('limit', o.limit, { above: 0 })
  const keyPrefix = o.keyPrefix === undefined ? 'bulwark:rl:' : o.keyPrefix
  if (typeof keyPrefix !== 'string' || /[{}]/.test(keyPrefix)) {
    throw new InvalidOptionError('keyPrefix', keyPrefix, 'a string without { or }')
  }
  // At most a year, and at most a million hosts: beyond, the insurance limiter's idle timeout or rate overflow.
  const window = checkNumber('window', o.window, { above: 0, max: MAX_WINDOW })
  const hosts = optionalNumber('hosts', o.hosts, 1, { min: 1, max: 1e6, integer: true })
  // The GCRA interval (window / limit) and each host's insurance rate must be finite numbers > 0.
  const rate = (limit / hosts) * (1000 / window)
  if (!(window / limit < Infinity) || !(rate > 0)) {
    throw new InvalidOptionError(
      'limit',
      limit,
      `large enough that window / limit is finite and limit / hosts per window is > 0`,
    )
  }
  return {
    redis: redis as RedisScriptClient,
    limit,
    window,
    keyPrefix,
    algorithm:
      o.algorithm === undefined ? 'sliding-window' : checkOneOf('algorithm', o.algorithm, ['sliding-window', 'gcra']),
    burst: optionalNumber('burst', o.burst, limit, { above: 0 }),
    timeout: optionalNumber('timeout', o.timeout, 50, { min: 1, max: 60_000 }),
    hosts,
    openAfter: optionalNumber('openAfter', o.openAfter, 3, { min: 1, integer: true }),
    probeInterval: optionalNumber('probeInterval', o.probeInterval, 1000, { min: 0 }),
    now: optionalFunction<Clock>('now', o.now),
  }
}

/** The insurance limiter: the user's, or per key a local limiter of the same kind at this host's share. */
export function resolveInsurance(value: unknown, o: ResolvedRedisOptions): KeyedLimiter<Limiter> {
  if (value !== undefined) {
    if (value instanceof KeyedLimiter) return value
    throw new InvalidOptionError('insurance', value, 'a KeyedLimiter')
  }
  const now = o.now
  const idle = { idleTimeout: Math.max(o.window * 2, 1000), now }
  if (o.algorithm === 'gcra') {
    const burst = Math.max(1, o.burst / o.hosts)
    const rate = ((o.limit / o.hosts) * 1000) / o.window
    return new KeyedLimiter(() => new TokenBucket({ rate, burst, now }), idle)
  }
  const limit = Math.max(1, o.limit / o.hosts)
  return new KeyedLimiter(() => new SlidingWindowLimiter({ limit, window: o.window, buckets: 10, now }), idle)
}

import type { ShadowRule } from '../../../foundation/live-rules/shadow-tally'
import { InvalidOptionError } from '../../../foundation/errors/invalid-option-error'
import { resolveSharing, type ResolvedSharing } from '../../../foundation/regions/sharing-options'
import type { Clock } from '../../../foundation/signals/clock'
import {
  checkBoolean,
  checkNumber,
  checkOneOf,
  checkOptions,
  optionalFunction,
  optionalNumber,
} from '../../../foundation/common/validate'
import { KeyedLimiter } from '../keyed-limiter'
import type { Limiter } from '../limiter'
import { SlidingWindowLimiter } from '../sliding-window-limiter'
import { TokenBucket } from '../token-bucket'
import type { GlideClient } from './clients/glide-port'
import type { RedisScriptClient } from './clients/ioredis-port'
import type { NodeRedisClient } from './clients/node-redis-port'
import { resolveMaxQueue, type WaitingOptions } from '../waiting/limiter-permits'

export type { RedisScriptClient } from './clients/ioredis-port'

export type RedisAlgorithm = 'sliding-window' | 'gcra'

/**
 * A Redis or Valkey client you own (the limiter never closes it): ioredis 5 or 6 and iovalkey (`Redis` or
 * `Cluster`), node-redis 5 or 6 (`createClient` or `createCluster`, connected by you), a Valkey GLIDE 2 client
 * (`GlideClient` or `GlideClusterClient`), or any object with ioredis' `evalsha` and `eval` (RedisScriptClient).
 */
export type RedisClient = RedisScriptClient | NodeRedisClient | GlideClient

export interface RedisRateLimiterOptions extends WaitingOptions {
  /** The client (RedisClient). The limiter loads its scripts on it at once, and connects a lazy ioredis client. */
  redis: RedisClient
  /** Permits per window, for the whole fleet (> 0). */
  limit: number
  /** Window length, ms (> 0). */
  window: number
  /**
   * Prefix of every key (default 'bulwark:rl:'); no braces: the key itself is the cluster hash tag. Keys are
   * `<keyPrefix>{<key>}:s:<limit>:<window>` (GCRA: `:g:<limit>:<window>:<burst>`); a key over 200 bytes is hashed.
   */
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
  /**
   * When Redis refuses a key with retryAfterMs R, refuse it on this host for R without asking Redis (default true):
   * never admits more than Redis would, and a flooding key costs about one Redis call per R.
   */
  localRefusal?: boolean
  /** Failures in a row (errors, timeouts, client not ready) after which Redis is skipped and only probed (default 3). */
  openAfter?: number
  /** While Redis is skipped, one decision this often (ms, default 1000) is tried on it as a probe. */
  probeInterval?: number
  /**
   * The longest a caller refused in `acquire` / `reserve` waits before its process asks Redis again, ms (default
   * 250): permits given back on other hosts are seen then.
   */
  pollInterval?: number
  /**
   * A clock in ms that replaces the Redis server's clock in the scripts and drives the probe timing (tests).
   * By default the scripts read Redis TIME, so that the hosts' clocks need not agree.
   */
  now?: Clock
  /**
   * One live rule (`limit`, `window`, `burst`) for every limiter of the host made with this name: `configure()` or
   * `bulwark set redis-rate-limiter.<name> limit=...` changes it for all of them (docs/rules/live-rules.md). The
   * decisions' state stays in Redis either way. Default: the rule is this limiter's own.
   */
  shared?: string
  /** Which application `shared` belongs to (SharingOptions.namespace). */
  namespace?: string
  /** Limiters a shared rule accepts across the host (default 64). */
  maxMembers?: number
}

/** The fields of a RedisRateLimiter's rule that `configure` changes at run time (burst only for GCRA). */
export type RedisRateLimiterRule = Partial<Pick<RedisRateLimiterOptions, 'limit' | 'window' | 'burst'>> & ShadowRule

export interface ResolvedRedisOptions {
  redis: unknown
  limit: number
  window: number
  keyPrefix: string
  algorithm: RedisAlgorithm
  burst: number
  timeout: number
  hosts: number
  openAfter: number
  probeInterval: number
  localRefusal: boolean
  maxQueue: number
  pollInterval: number
  now: Clock | undefined
  /** Where the live rule lives (`shared`, `namespace`, lanes). */
  sharing: ResolvedSharing
}

const MAX_WINDOW = 365 * 86_400_000

export function resolveRedisOptions(options: unknown): ResolvedRedisOptions {
  const o = checkOptions<RedisRateLimiterOptions>(options, 'options')
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
    redis: o.redis,
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
    localRefusal: o.localRefusal === undefined ? true : checkBoolean('localRefusal', o.localRefusal),
    maxQueue: resolveMaxQueue(o),
    pollInterval: optionalNumber('pollInterval', o.pollInterval, 250, { min: 1, max: 3_600_000 }),
    now: optionalFunction<Clock>('now', o.now),
    sharing: resolveSharing({ shared: o.shared, namespace: o.namespace, maxMembers: o.maxMembers }),
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
    return new KeyedLimiter<Limiter>(() => new TokenBucket({ rate, burst, now }), idle)
  }
  const limit = Math.max(1, o.limit / o.hosts)
  return new KeyedLimiter<Limiter>(() => new SlidingWindowLimiter({ limit, window: o.window, buckets: 10, now }), idle)
}

import { InvalidArgumentError } from '../../../foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../../foundation/errors/invalid-option-error'
import type { RedisError } from '../../../foundation/errors/redis-error'
import { EventSource, type Event } from '../../../foundation/common/event-source'
import type { Clock } from '../../../foundation/signals/clock'
import { coarseNow } from '../../../foundation/signals/clock'
import { checkNumber, checkOptions, optionalFunction, optionalNumber } from '../../../foundation/common/validate'
import type { UpstreamLimits } from '../quota-permits'
import type { AcquireOptions } from '../waiting/acquire-options'
import { resolveMaxQueue, type WaitingOptions } from '../waiting/limiter-permits'
import { PermitQueue, type PermitQueueStats } from '../waiting/permit-queue'
import type { Reservation } from '../waiting/reservation'
import type { RedisPort } from './clients/redis-port'
import { toRedisPort } from './clients/to-redis-port'
import type { RedisClient } from './redis-options'
import { RedisKeys, boundedKey } from './redis-keys'
import { QuotaCalls } from './quota-calls'

export interface RedisQuotaOptions extends WaitingOptions {
  /** The Redis or Valkey client (RedisClient); yours: the quota never closes it. */
  redis: RedisClient
  /** Which quota: one per upstream and account, the same name on every host (default 'default'). */
  name?: string
  /** The window both limits count over, ms (60 000 for "per minute"). */
  window: number
  /** Requests per window, for the whole fleet (default: not limited). */
  requests?: number
  /** Cost per window (tokens), for the whole fleet (default: not limited). */
  cost?: number
  /** Prefix of its two keys (default 'bulwark:quota:'; no braces: the name is the cluster hash tag). */
  keyPrefix?: string
  /** Longest one Redis call may take, ms (default 1000): then the head asks again shortly. */
  timeout?: number
  /**
   * The longest a refused caller waits before its process asks Redis again, ms (default 250): permits given back on
   * other hosts (settled reservations) are seen then. Each ask is one script call per waiting process.
   */
  pollInterval?: number
  /** A clock in ms that replaces Redis' TIME in the script (tests). Default: the server's clock. */
  now?: Clock
}

export interface RedisQuotaStats {
  /** Script calls sent. */
  calls: number
  /** Calls that failed or timed out (their callers asked again, within their maxWait). */
  errors: number
  /** This process's callers waiting in `reserve`. */
  queue: PermitQueueStats
}

/**
 * A Quota for a whole fleet, kept in Redis: requests and cost per window as two GCRA buckets under one hash tag,
 * taken together by one script call (docs/guide/ratelimit.md, "Quotas"). The callers of each process wait in one
 * queue (priority, FIFO, one timer) whose head asks Redis, then waits as long as Redis says; a settle or cancel is
 * one more call. While Redis cannot be reached, nothing is granted: an upstream's quota is not spent blind.
 */
export class RedisQuota {
  readonly name: string
  readonly window: number
  /** Redis errors and timeouts: a RedisError (`ERR_BULWARK_REDIS`), the client's error as `cause`. */
  readonly onError: Event<RedisError>
  private readonly calls: QuotaCalls
  private readonly waiters: PermitQueue
  private readonly errors = new EventSource<RedisError>()

  constructor(options: RedisQuotaOptions) {
    const o = checkOptions<RedisQuotaOptions>(options, 'options')
    const port: RedisPort = toRedisPort(o.redis)
    this.name = o.name === undefined ? 'default' : checkName(o.name)
    this.window = checkNumber('window', o.window, { above: 0, max: 365 * 86_400_000 })
    const requests = o.requests === undefined ? undefined : checkNumber('requests', o.requests, { above: 0 })
    const cost = o.cost === undefined ? undefined : checkNumber('cost', o.cost, { above: 0 })
    if (requests === undefined && cost === undefined) {
      throw new InvalidOptionError('requests', requests, 'a number > 0 (or `cost`: a quota limits one of them)')
    }
    const keyPrefix = o.keyPrefix === undefined ? 'bulwark:quota:' : o.keyPrefix
    if (typeof keyPrefix !== 'string' || /[{}]/.test(keyPrefix)) {
      throw new InvalidOptionError('keyPrefix', keyPrefix, 'a string without { or }')
    }
    const timeout = optionalNumber('timeout', o.timeout, 1000, { min: 1, max: 60_000 })
    const poll = optionalNumber('pollInterval', o.pollInterval, 250, { min: 1, max: 3_600_000 })
    const injected = optionalFunction<Clock>('now', o.now)
    const bounded = boundedKey(this.name)
    const keys = [requests, cost].map((limit, i) =>
      new RedisKeys(keyPrefix, `q:${i === 0 ? 'r' : 'c'}:${limit ?? 0}:${this.window}`).of(this.name, bounded),
    )
    this.onError = this.errors.event
    const limits = { window: this.window, requests, cost }
    this.calls = new QuotaCalls(
      port,
      keys,
      limits,
      timeout,
      poll,
      injected,
      (e) => this.errors.emit(e),
      () => this.given(),
    )
    this.waiters = new PermitQueue(this.calls, injected ?? coarseNow, resolveMaxQueue(o))
  }

  /**
   * Takes one request and `cost` (the estimate, default 0) for the fleet, waiting for them (AcquireOptions). Resolves
   * with the Reservation to settle with the real cost (one more Redis call); rejects as TokenBucket.acquire does.
   */
  reserve(cost = 0, options?: AcquireOptions): Promise<Reservation> {
    const most = this.calls.maxPermits() - 1
    if (typeof cost !== 'number' || !(cost >= 0 && cost <= most)) {
      return Promise.reject(new InvalidArgumentError('cost', cost, `a number in [0, ${most}]`))
    }
    return this.waiters.acquire(cost + 1, options, true) as Promise<Reservation>
  }

  /** Grants nothing, fleet-wide, for `ms` (a 429's Retry-After): both limits are empty then. */
  pause(ms: number): void {
    if (typeof ms !== 'number' || !(ms >= 0 && ms < Infinity)) throw new InvalidArgumentError('ms', ms, 'a number >= 0')
    this.calls.floor({ pauseMs: ms })
  }

  /** Lowers the fleet's limits to what the upstream says remains (never raises them); see UpstreamLimits. */
  observe(limits: UpstreamLimits): void {
    this.calls.floor(limits)
  }

  stats(): RedisQuotaStats {
    return { calls: this.calls.sent, errors: this.calls.failures, queue: this.waiters.stats() }
  }

  /** Rejects this process's waiters. The client stays open (it is yours). Idempotent. */
  close(): void {
    this.waiters.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  private given(): void {
    this.waiters.given()
  }
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new InvalidOptionError('name', name, 'a non-empty string')
  return name
}

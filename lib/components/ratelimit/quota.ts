import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkNumber, checkOptions, optionalBoolean } from '../../foundation/common/validate'
import { coarseNow } from '../../foundation/signals/clock'
import type { SharingOptions } from './sharing'
import { TokenBucket } from './token-bucket'
import type { AcquireOptions } from './waiting/acquire-options'
import { resolveMaxQueue, type WaitingOptions } from './waiting/limiter-permits'
import { PermitQueue, type PermitQueueStats } from './waiting/permit-queue'
import { QuotaPermits, type UpstreamLimits } from './quota-permits'
import type { Reservation } from './waiting/reservation'

export type { UpstreamLimits } from './quota-permits'

export interface QuotaOptions extends SharingOptions, WaitingOptions {
  /** The window both limits count over, ms (60 000 for a provider's "per minute"). */
  window: number
  /** Requests per window (default: requests are not limited). */
  requests?: number
  /** Cost per window: tokens, credits, bytes (default: cost is not limited). */
  cost?: number
  /** Spaces requests evenly over the window instead of letting a full window's worth go at once (default false). */
  pacing?: boolean
}

export interface QuotaStats {
  /** Requests per window, and those available now (undefined: not limited). */
  requests: { limit: number; available: number } | undefined
  /** Cost per window, and the cost available now (undefined: not limited). */
  cost: { limit: number; available: number } | undefined
  /** This process's callers waiting in `reserve` (undefined until one waited). */
  queue: PermitQueueStats | undefined
}

/**
 * Two limits taken in one call: requests per window and cost per window, the quotas a model provider sets (requests
 * and tokens per minute). Each is a token bucket refilled continuously up to a window's worth, as the providers'
 * own are. `reserve(estimate)` takes one request and the estimated cost when both are there, waiting for them in
 * one queue (priority, FIFO, one timer); the Reservation settles the real cost once the answer says it. `pause`
 * and `observe` apply what the upstream's answers say (a 429's Retry-After, its remaining counts). With `shared`,
 * one quota for every process of the host; for a fleet, RedisQuota.
 */
export class Quota {
  readonly window: number
  private readonly requestBucket: TokenBucket | undefined
  private readonly costBucket: TokenBucket | undefined
  private readonly permits: QuotaPermits
  private readonly waiters: PermitQueue

  constructor(options: QuotaOptions) {
    const o = checkOptions<QuotaOptions>(options, 'options')
    this.window = checkNumber('window', o.window, { above: 0, max: 365 * 86_400_000 })
    const requests = o.requests === undefined ? undefined : checkNumber('requests', o.requests, { above: 0 })
    const cost = o.cost === undefined ? undefined : checkNumber('cost', o.cost, { above: 0 })
    if (requests === undefined && cost === undefined) {
      throw new InvalidOptionError('requests', requests, 'a number > 0 (or `cost`: a quota limits one of them)')
    }
    const pacing = optionalBoolean('pacing', o.pacing, false)
    const maxQueue = resolveMaxQueue(o)
    const now = o.now ?? coarseNow
    const bucket = (limit: number, part: string, paced: boolean) =>
      new TokenBucket({
        rate: (limit * 1000) / this.window,
        burst: limit,
        pacing: paced,
        shared: o.shared === undefined ? undefined : `${o.shared}-${part}`,
        namespace: o.namespace,
        maxMembers: o.maxMembers,
        now,
      })
    this.requestBucket = requests === undefined ? undefined : bucket(requests, 'requests', pacing)
    this.costBucket = cost === undefined ? undefined : bucket(cost, 'cost', false)
    this.permits = new QuotaPermits(this.requestBucket, this.costBucket, () => this.waiters.given())
    this.waiters = new PermitQueue(this.permits, now, maxQueue)
  }

  /**
   * Takes one request and `cost` (the estimate, default 0) when both are there, waiting for them (AcquireOptions:
   * maxWait, priority, signal). Resolves with the Reservation to settle with the real cost; rejects as
   * TokenBucket.acquire does.
   */
  reserve(cost = 0, options?: AcquireOptions): Promise<Reservation> {
    const most = this.costBucket?.burst ?? Infinity
    if (typeof cost !== 'number' || !(cost >= 0 && cost <= most)) {
      return Promise.reject(new InvalidArgumentError('cost', cost, `a number in [0, ${most}]`))
    }
    return this.waiters.acquire(cost + 1, options, true) as Promise<Reservation>
  }

  /** One request and `cost` now, or undefined when either limit lacks them. */
  tryReserve(cost = 0): Reservation | undefined {
    if (typeof cost !== 'number' || !(cost >= 0 && cost < Infinity)) return undefined
    return this.permits.tryAcquire(cost + 1) ? this.permits.reservation(cost + 1) : undefined
  }

  /** Grants nothing for `ms` (a 429's Retry-After): both limits are empty then, and refill from there. */
  pause(ms: number): void {
    if (typeof ms !== 'number' || !(ms >= 0 && ms < Infinity)) throw new InvalidArgumentError('ms', ms, 'a number >= 0')
    this.permits.pause(ms)
  }

  /** Lowers what is available to what the upstream says remains (it never raises it); see UpstreamLimits. */
  observe(limits: UpstreamLimits): void {
    this.permits.observe(limits)
  }

  stats(): QuotaStats {
    const of = (b: TokenBucket | undefined) =>
      b === undefined ? undefined : { limit: b.burst, available: b.available() }
    return { requests: of(this.requestBucket), cost: of(this.costBucket), queue: this.waiters.stats() }
  }

  /** Rejects the waiters and detaches the limits. Idempotent. */
  close(): void {
    this.waiters.close()
    this.requestBucket?.close()
    this.costBucket?.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }
}

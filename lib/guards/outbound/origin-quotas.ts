import type { UpstreamLimits } from '../../components/ratelimit/quota-permits'
import type { AcquireOptions } from '../../components/ratelimit/waiting/acquire-options'
import type { Reservation } from '../../components/ratelimit/waiting/reservation'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { type HeaderLookup, headerLookup, upstreamLimits } from './rate-limit-headers'

/** What a guard needs of a quota: Quota (a host) and RedisQuota (a fleet) both offer it. */
export interface UpstreamQuota {
  reserve(cost?: number, options?: AcquireOptions): Promise<Reservation>
  pause(ms: number): void
  observe(limits: UpstreamLimits): void
}

/** An upstream's quota in an outbound guard, and how its calls are costed (docs/guide/integrations.md). */
export interface OriginQuota<Request = unknown> {
  quota: UpstreamQuota
  /** The cost reserved before each call (default 0: requests only), or a function of the call. */
  estimate?: number | ((request: Request) => number)
  /**
   * The real cost, read from the answer's headers; undefined keeps the estimate. A cost only the body tells (a
   * model's `usage`) is settled by the caller through the call's Reservation (`context.reservation` with undici).
   */
  cost?: (statusCode: number, header: HeaderLookup) => number | undefined
  /** Longest a call waits for the quota, ms (default 30 000; 0: refuse at once when it is spent). */
  maxWait?: number
  /** The class of the calls in the quota's queue (default normal). */
  priority?: AcquireOptions['priority']
  /** Lower the quota to what the answers' rate-limit headers say remains, pause it on a 429 (default true). */
  learn?: boolean
}

/** The guards' `quotas` option: per origin (or gRPC target), a Quota or RedisQuota, or an OriginQuota. */
export type QuotaChoice<Request = unknown> =
  | Record<string, UpstreamQuota | OriginQuota<Request>>
  | ((upstream: string) => UpstreamQuota | OriginQuota<Request> | undefined)

/** The quota of each upstream (undefined: the guard has none). */
export function resolveQuotas<Request>(
  value: unknown,
): ((upstream: string) => OriginQuota<Request> | undefined) | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'function') {
    return (upstream) => asOriginQuota((value as (u: string) => unknown)(upstream), `quotas(${upstream})`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionError('quotas', value, 'an object of quotas by origin, or a function of the origin')
  }
  const table = new Map<string, OriginQuota<Request>>()
  for (const [upstream, quota] of Object.entries(value)) {
    table.set(upstream, asOriginQuota(quota, `quotas['${upstream}']`) as OriginQuota<Request>)
  }
  return (upstream) => table.get(upstream)
}

function asOriginQuota<Request>(value: unknown, field: string): OriginQuota<Request> | undefined {
  if (value === undefined) return undefined
  const expected = 'a Quota, a RedisQuota, or { quota, estimate?, cost?, maxWait?, priority?, learn? }'
  if (isQuota(value)) return { quota: value }
  const o = value as OriginQuota<Request> | null
  if (o === null || typeof o !== 'object' || !isQuota(o.quota)) throw new InvalidOptionError(field, value, expected)
  if (
    o.estimate !== undefined &&
    typeof o.estimate !== 'function' &&
    !(typeof o.estimate === 'number' && o.estimate >= 0)
  ) {
    throw new InvalidOptionError(`${field}.estimate`, o.estimate, 'a number >= 0 or a function of the call')
  }
  if (o.cost !== undefined && typeof o.cost !== 'function')
    throw new InvalidOptionError(`${field}.cost`, o.cost, 'a function')
  return o
}

function isQuota(value: unknown): value is UpstreamQuota {
  const q = value as Partial<UpstreamQuota> | null
  return q !== null && typeof q === 'object' && typeof q.reserve === 'function' && typeof q.observe === 'function'
}

/** What a guarded request asks of its call's quota. */
export interface CallQuota {
  readonly reservation: Reservation | undefined
  answered(statusCode: number, headers: unknown): void
}

/** One call's part of a quota: waits for it, then settles it from the answer. */
export class QuotaCall<Request> implements CallQuota {
  reservation: Reservation | undefined = undefined

  constructor(private readonly policy: OriginQuota<Request>) {}

  /** Waits for the quota; resolves with the reservation (rejects with the quota's OverloadError or AbortedError). */
  take(request: Request, signal: AbortSignal | undefined): Promise<Reservation> {
    const p = this.policy
    const cost = typeof p.estimate === 'function' ? p.estimate(request) : (p.estimate ?? 0)
    return p.quota.reserve(cost, { maxWait: p.maxWait, priority: p.priority, signal }).then((reservation) => {
      this.reservation = reservation
      return reservation
    })
  }

  /** The answer's status and headers (or a lookup over them): learn what they say, and settle when they tell the cost. */
  answered(statusCode: number, headers: unknown): void {
    const p = this.policy
    const header = typeof headers === 'function' ? (headers as HeaderLookup) : headerLookup(headers)
    if (p.learn !== false) {
      const limits = upstreamLimits(statusCode, header, Date.now())
      if (limits !== undefined) p.quota.observe(limits)
    }
    const reservation = this.reservation
    if (reservation === undefined) return
    // Refused by the upstream's own limit: it charged nothing.
    if (statusCode === 429) return reservation.cancel()
    const cost = p.cost?.(statusCode, header)
    if (cost !== undefined && cost >= 0 && cost < Infinity) reservation.settle(cost)
  }
}

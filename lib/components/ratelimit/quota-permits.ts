import type { TokenBucket } from './token-bucket'
import type { PermitSource } from './waiting/permit-source'
import { Reservation } from './waiting/reservation'

/** What an upstream's answer says of its limits (parsed from its headers by the outbound guards). */
export interface UpstreamLimits {
  /** Requests the upstream will still take now. */
  requests?: number
  /** Cost (tokens) the upstream will still take now. */
  cost?: number
  /** Nothing will be taken for this long, ms: a 429's Retry-After, or a fixed window's reset when it is empty. */
  pauseMs?: number
}

/**
 * A Quota's two buckets as one PermitSource. The queue's permit count is the cost plus one (so that a cost of 0
 * still asks for something): one request and n - 1 of cost, taken together or not at all.
 */
export class QuotaPermits implements PermitSource {
  constructor(
    private readonly requests: TokenBucket | undefined,
    private readonly cost: TokenBucket | undefined,
    private readonly given: () => void,
  ) {}

  tryAcquire(n: number): boolean {
    const requests = this.requests
    if (requests !== undefined && !requests.tryAcquire(1)) return false
    const cost = n - 1
    if (cost > 0 && this.cost !== undefined && !this.cost.tryAcquire(cost)) {
      requests?.adjust(-1)
      return false
    }
    return true
  }

  retryAfterMs(n: number): number {
    const request = this.requests === undefined ? 0 : this.requests.retryAfterMs(1)
    const cost = n > 1 && this.cost !== undefined ? this.cost.retryAfterMs(n - 1) : 0
    return request > cost ? request : cost
  }

  maxPermits(): number {
    return this.cost === undefined ? Infinity : this.cost.burst + 1
  }

  reservation(n: number): Reservation {
    return new Reservation(this, n - 1)
  }

  givebacks(): number | undefined {
    const a = this.requests?.givebacks()
    const b = this.cost?.givebacks()
    return a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0)
  }

  /** A reservation settled: the cost difference moves; a cancel gives the request back too. */
  adjust(delta: number, _mark: number, cancelled?: boolean): void {
    if (delta !== 0) this.cost?.adjust(delta)
    if (cancelled) this.requests?.adjust(-1)
    if (delta < 0 || cancelled) this.given()
  }

  pause(ms: number): void {
    for (const bucket of [this.requests, this.cost]) {
      // Empty at now + ms: what is there now, plus what would come in ms.
      if (bucket !== undefined) bucket.adjust(bucket.available() + (ms * bucket.rate) / 1000)
    }
  }

  observe(limits: UpstreamLimits): void {
    lower(this.requests, limits.requests)
    lower(this.cost, limits.cost)
    if (limits.pauseMs !== undefined && limits.pauseMs > 0) this.pause(limits.pauseMs)
  }
}

function lower(bucket: TokenBucket | undefined, remaining: number | undefined): void {
  if (bucket === undefined || remaining === undefined || !(remaining >= 0)) return
  const excess = bucket.available() - remaining
  if (excess > 0) bucket.adjust(excess)
}

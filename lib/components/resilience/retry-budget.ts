import { resolveWindowOptions, windowLayout } from '../breakers/window-options'
import { WindowTally } from '../breakers/window-tally'
import { SharedRegion } from '../../foundation/regions/shared-region'
import type { SharingOptions } from '../../foundation/regions/sharing-options'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'
import { registerComponent } from '../../foundation/common/component-registry'

export interface RetryBudgetOptions extends SharingOptions {
  /** Retries allowed per request in the window (default 0.1: at most 10 % more load from retries). */
  ratio?: number
  /** Retries allowed per second regardless of traffic, so a quiet service can still retry (default 10). */
  minPerSecond?: number
  /** Window over which requests and retries are counted, ms (default 10 000). */
  window?: number
  /** Buckets per window (default 10). */
  buckets?: number
}

export interface RetryBudgetStats {
  /** First attempts recorded in the window (host-wide when shared). */
  requests: number
  /** Retries granted in the window (host-wide when shared). */
  retries: number
  /** Retries that would still be granted now. */
  available: number
}

/**
 * Caps retries at a share of requests over a rolling window (plus a small reserve), so that when a backend fails
 * every call, retries add at most `ratio` to its load instead of multiplying it by the number of attempts.
 * Local by default (each worker keeps the same ratio of its own traffic); with `shared`, one budget for the host.
 */
export class RetryBudget {
  readonly shared: string | undefined
  private readonly ratio: number
  private readonly reserve: number
  private readonly now: () => number
  private readonly region: SharedRegion
  private readonly tally: WindowTally

  constructor(options?: RetryBudgetOptions) {
    const o = checkOptions<RetryBudgetOptions>(options, 'options')
    this.ratio = optionalNumber('ratio', o.ratio, 0.1, { min: 0, max: 1000 })
    const minPerSecond = optionalNumber('minPerSecond', o.minPerSecond, 10, { min: 0, max: 1e9 })
    const w = resolveWindowOptions(o, { window: 10_000, buckets: 10 })
    this.shared = w.shared
    this.now = w.now
    this.reserve = (minPerSecond * w.window) / 1000
    // One add per request (value 0) or retry (value 1): count - sum is requests, sum is retries.
    const { layout, placement } = windowLayout('retry-budget', w, `ratio=${this.ratio} minPerSecond=${minPerSecond}`)
    this.region = SharedRegion.forComponent(w.shared, layout, w.namespace)
    this.tally = new WindowTally(this.region, placement)
  }

  /** Counts a first attempt (not a retry). Never throws, never allocates. */
  recordRequest(): void {
    this.tally.record(0, this.now())
  }

  /**
   * Whether a retry may be made now; a true answer spends one retry of the budget. Never throws, never allocates.
   * Shared, the check and the spend are two steps: members deciding at the same instant may overshoot by a few.
   */
  tryAcquire(): boolean {
    const now = this.now()
    const tally = this.tally
    tally.sync(now)
    const retries = tally.sum
    if (retries >= this.ratio * (tally.count - retries) + this.reserve) return false
    tally.record(1, now)
    return true
  }

  stats(): RetryBudgetStats {
    const tally = this.tally
    tally.sync(this.now())
    const retries = tally.sum
    const requests = tally.count - retries
    return { requests, retries, available: Math.max(0, Math.ceil(this.ratio * requests + this.reserve - retries)) }
  }

  /** Detaches from shared memory (a local budget just stops counting). Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }
}
registerComponent('RetryBudget', RetryBudget)

import { WindowTally } from '../breakers/window-tally'
import { RegionLayout } from '../shared/region-layout'
import { SharedRegion } from '../shared/shared-region'
import { type Clock, coarseNow } from '../signals/clock'
import { InvalidOptionError } from '../errors/invalid-option-error'
import { checkOptions, optionalFunction, optionalNumber } from '../validate'

export interface RetryBudgetOptions {
  /** Retries allowed per request in the window (default 0.1: at most 10 % more load from retries). */
  ratio?: number
  /** Retries allowed per second regardless of traffic, so a quiet service can still retry (default 10). */
  minPerSecond?: number
  /** Window over which requests and retries are counted, ms (default 10 000). */
  window?: number
  /** Buckets per window (default 10). */
  buckets?: number
  /** Monotonic clock, ms (default: the coarse clock). */
  now?: Clock
}

export interface RetryBudgetStats {
  /** First attempts recorded in the window. */
  requests: number
  /** Retries granted in the window. */
  retries: number
  /** Retries that would still be granted now. */
  available: number
}

/**
 * Caps retries at a share of requests over a rolling window (plus a small reserve), so that when a backend fails
 * every call, retries add at most `ratio` to its load instead of multiplying it by the number of attempts.
 * Per thread: each worker keeps the same ratio of its own traffic.
 */
export class RetryBudget {
  private readonly ratio: number
  private readonly reserve: number
  private readonly now: Clock
  private readonly tally: WindowTally

  constructor(options?: RetryBudgetOptions) {
    const o = checkOptions<RetryBudgetOptions>(options, 'options')
    this.ratio = optionalNumber('ratio', o.ratio, 0.1, { min: 0, max: 1000 })
    const minPerSecond = optionalNumber('minPerSecond', o.minPerSecond, 10, { min: 0, max: 1e9 })
    const window = optionalNumber('window', o.window, 10_000, { above: 0, max: 86_400_000 })
    const buckets = optionalNumber('buckets', o.buckets, 10, { integer: true, min: 1, max: 10_000 })
    if (!(window / buckets > 0))
      throw new InvalidOptionError('window', window, `large enough that window / buckets (${buckets}) > 0`)
    this.now = optionalFunction<Clock>('now', o.now) ?? coarseNow
    this.reserve = (minPerSecond * window) / 1000
    // One add per request (value 0) or retry (value 1): count - sum is requests, sum is retries.
    const layout = new RegionLayout('retry-budget', 1)
    const placement = layout.window(buckets, window / buckets, this.now())
    this.tally = new WindowTally(SharedRegion.local(layout), placement)
  }

  /** Counts a first attempt (not a retry). */
  recordRequest(): void {
    this.tally.record(0, this.now())
  }

  /** Whether a retry may be made now; a true answer uses one retry of the budget. */
  canRetry(): boolean {
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
}

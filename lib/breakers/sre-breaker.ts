import { BreakerOpenError } from '../errors/breaker-open-error'
import { SharedRegion } from '../shared/shared-region'
import type { Clock } from '../signals/clock'
import { checkOptions, optionalBoolean, optionalFunction, optionalNumber } from '../validate'
import { runGuarded } from './run-guarded'
import { resolveWindowOptions, windowLayout } from './window-options'
import { WindowTally } from './window-tally'

export interface SreBreakerOptions {
  /** Expected success rate in (0, 1] (default 0.6): calls flow freely while requests < accepts / success. */
  success?: number
  /** Requests in the window below which everything is allowed (default 100). */
  request?: number
  /** Window length, ms (default 3000). */
  window?: number
  /** Buckets per window (default 10). */
  buckets?: number
  /**
   * Whether a call this breaker rejects counts as a failed request (default true): the SRE book counts every
   * attempt in `requests`, and the reference middleware marks a rejected call failed. This keeps the traffic let
   * through near `accepts / success` whatever the offered load; false lets it grow with the offered load.
   */
  countRejections?: boolean
  /** One breaker for every thread and process of the host that uses this name. */
  shared?: string
  /** Attachments a shared breaker accepts (threads x instances across the host; default 64). */
  maxMembers?: number
  /** Monotonic clock, ms (default: the coarse clock). */
  now?: Clock
  /** Random source in [0, 1) (default Math.random). */
  random?: () => number
}

export type SreBreakerState = 'closed' | 'open'

export interface SreBreakerStats {
  /** Successes in the window (host-wide when shared). */
  accepts: number
  /** Requests in the window: successes, failures and (with countRejections) rejections. */
  total: number
  /** Probability that the next call is rejected. */
  dropProbability: number
  state: SreBreakerState
}

/**
 * Google SRE client-side adaptive throttling (docs/rules/sre-breaker.md): once the window holds at least `request`
 * requests and more than K = 1/success times the accepted ones, each call is rejected with probability
 * max(0, (total - K * accepts) / (total + 1)). It needs no timer and no half-open state: the rejection rate falls
 * as successes come back.
 */
export class SreBreaker {
  /** The `shared` name, if any. */
  readonly shared: string | undefined
  private readonly k: number
  private readonly request: number
  private readonly countRejections: boolean
  private readonly now: Clock
  private readonly random: () => number
  private readonly region: SharedRegion
  private readonly tally: WindowTally
  private readonly report = (ok: boolean): void => (ok ? this.markSuccess() : this.markFailed())

  constructor(options?: SreBreakerOptions) {
    const o = checkOptions<SreBreakerOptions>(options, 'options')
    const success = optionalNumber('success', o.success, 0.6, { above: 0, max: 1 })
    this.k = 1 / success
    this.request = optionalNumber('request', o.request, 100, { integer: true, min: 0, max: 1e12 })
    this.countRejections = optionalBoolean('countRejections', o.countRejections, true)
    this.random = optionalFunction<() => number>('random', o.random) ?? Math.random
    const w = resolveWindowOptions(o, { window: 3000, buckets: 10 })
    this.shared = w.shared
    this.now = w.now
    // In the fingerprint so that members agree, and so that watchers (`bulwark top`) can tell the state.
    const { layout, placement } = windowLayout('sre', w, `success=${success} request=${this.request}`)
    this.region = SharedRegion.forComponent(w.shared, layout)
    this.tally = new WindowTally(this.region, placement)
  }

  /** Whether to make the call. Never throws, never allocates. */
  allow(): boolean {
    const now = this.now()
    const tally = this.tally
    tally.sync(now)
    const total = tally.count
    const excess = total - this.k * tally.sum
    if (total < this.request || excess < 0) return true
    if (this.random() >= excess / (total + 1)) return true
    if (this.countRejections) tally.record(0, now)
    return false
  }

  /** The allowed call succeeded. */
  markSuccess(): void {
    this.tally.record(1, this.now())
  }

  /** The allowed call failed (the downstream refused or broke). */
  markFailed(): void {
    this.tally.record(0, this.now())
  }

  /** Runs `fn` if allowed and marks its outcome; rejects with BreakerOpenError when the breaker refuses. */
  execute<T>(fn: () => T | PromiseLike<T>): Promise<T> {
    if (!this.allow()) return Promise.reject(new BreakerOpenError(this.shared))
    return runGuarded(fn, this.report, 0)
  }

  /** 'open' while the window holds enough requests and too few accepts (calls are then rejected at random). */
  get state(): SreBreakerState {
    return this.stats().state
  }

  stats(): SreBreakerStats {
    const tally = this.tally
    tally.sync(this.now())
    return sreStats(tally.sum, tally.count, this.k, this.request)
  }

  /** Detaches from shared memory (a local breaker just stops counting). */
  close(): void {
    this.region.close()
  }
}

/** The state a window with `accepts` successes out of `total` requests gives (shared with watchers). */
export function sreStats(accepts: number, total: number, k: number, request: number): SreBreakerStats {
  const excess = total - k * accepts
  const open = total >= request && excess >= 0
  return { accepts, total, dropProbability: open ? excess / (total + 1) : 0, state: open ? 'open' : 'closed' }
}

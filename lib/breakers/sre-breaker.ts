import { BreakerOpenError } from '../errors/breaker-open-error'
import { type ExecuteOptions, type GuardedFunction, outcome, runGuarded, startError } from '../execution/run-guarded'
import { SharedRegion } from '../shared/shared-region'
import type { SharingOptions } from '../shared/sharing-options'
import { checkOptions, optionalBoolean, optionalFunction, optionalNumber, refuseFields, renamedTo } from '../validate'
import type { Breaker } from './breaker'
import { resolveWindowOptions, windowLayout } from './window-options'
import { WindowTally } from './window-tally'
import { forcedBreaker, resolveSwitches, type Switchboard } from '../switches/breaker-switch'
import { registerComponent } from '../metrics/component-registry'

export interface SreBreakerOptions extends SharingOptions {
  /** Expected success rate in (0, 1] (default 0.6): calls flow freely while calls < successes / success. */
  success?: number
  /** Calls the window must hold before the breaker rejects any (default 100). */
  minimumCalls?: number
  /** Window length, ms (default 3000). */
  window?: number
  /** Buckets per window (default 10). */
  buckets?: number
  /**
   * Whether a call this breaker rejects counts as a failed call (default true): the SRE book counts every attempt
   * in `requests`, and the reference middleware marks a rejected call failed. This keeps the traffic let through
   * near `accepts / success` whatever the offered load; false lets it grow with the offered load.
   */
  countRejections?: boolean
  /** Random source in [0, 1) (default Math.random). */
  random?: () => number
  /** Operators' switches: `breaker:<shared name>` forces this breaker open or closed (docs/guide/degrade.md). */
  switches?: Switchboard
}

export type SreBreakerState = 'closed' | 'open'

export interface SreBreakerStats {
  /** Successes in the window (host-wide when shared). */
  accepts: number
  /** Calls in the window: successes, failures and (with countRejections) rejections. */
  calls: number
  /** Probability that the next call is rejected. */
  dropProbability: number
  state: SreBreakerState
}

/**
 * Google SRE client-side adaptive throttling (docs/rules/sre-breaker.md): once the window holds at least
 * `minimumCalls` calls and more than K = 1/success times the accepted ones, each call is rejected with probability
 * max(0, (calls - K * accepts) / (calls + 1)). It needs no timer and no half-open state: the rejection rate falls
 * as successes come back.
 */
export class SreBreaker implements Breaker {
  /** The `shared` name, if any. */
  readonly shared: string | undefined
  /** An SreBreaker counts outcomes, not their durations. */
  readonly usesDuration = false
  private readonly k: number
  private readonly minimumCalls: number
  private readonly countRejections: boolean
  private readonly now: () => number
  private readonly random: () => number
  private readonly region: SharedRegion
  private readonly tally: WindowTally
  private readonly outcome = outcome(this)
  private readonly switches: Switchboard | undefined

  constructor(options?: SreBreakerOptions) {
    const o = checkOptions<SreBreakerOptions>(options, 'options')
    refuseFields(o, { request: renamedTo('minimumCalls') })
    const success = optionalNumber('success', o.success, 0.6, { above: 0, max: 1 })
    this.k = 1 / success
    this.minimumCalls = optionalNumber('minimumCalls', o.minimumCalls, 100, { integer: true, min: 0, max: 1e12 })
    this.countRejections = optionalBoolean('countRejections', o.countRejections, true)
    this.random = optionalFunction<() => number>('random', o.random) ?? Math.random
    this.switches = resolveSwitches(o.switches)
    const w = resolveWindowOptions(o, { window: 3000, buckets: 10 })
    this.shared = w.shared
    this.now = w.now
    // In the fingerprint so that members agree, and so that watchers (`bulwark top`) can tell the state.
    const { layout, placement } = windowLayout('sre', w, `success=${success} minimumCalls=${this.minimumCalls}`)
    this.region = SharedRegion.forComponent(w.shared, layout, w.namespace)
    this.tally = new WindowTally(this.region, placement)
  }

  tryAcquire(): boolean {
    if (this.switches !== undefined) {
      const forced = forcedBreaker(this.switches, this.shared)
      if (forced !== undefined) return forced
    }
    const now = this.now()
    const tally = this.tally
    tally.sync(now)
    const calls = tally.count
    const excess = calls - this.k * tally.sum
    if (calls < this.minimumCalls || excess < 0) return true
    if (this.random() >= excess / (calls + 1)) return true
    if (this.countRejections) tally.record(0, now)
    return false
  }

  /** The permitted call succeeded (an SreBreaker ignores the duration). */
  recordSuccess(_durationMs?: number): void {
    this.tally.record(1, this.now())
  }

  /** The permitted call failed: the downstream refused or broke (an SreBreaker ignores the duration). */
  recordFailure(_durationMs?: number): void {
    this.tally.record(0, this.now())
  }

  /** Runs `fn` if permitted and records its outcome; rejects with BreakerOpenError when the breaker refuses. */
  execute<T>(fn: GuardedFunction<T>, options?: ExecuteOptions): Promise<T> {
    const error = startError(fn, options)
    if (error !== undefined) return Promise.reject(error)
    if (!this.tryAcquire()) return Promise.reject(new BreakerOpenError(this.shared))
    return runGuarded(fn, options?.signal, this.outcome)
  }

  /** 'open' while the window holds enough calls and too few accepts (calls are then rejected at random). */
  get state(): SreBreakerState {
    return this.stats().state
  }

  stats(): SreBreakerStats {
    const tally = this.tally
    tally.sync(this.now())
    return sreStats(tally.sum, tally.count, this.k, this.minimumCalls)
  }

  /** Detaches from shared memory (a local breaker just stops counting). Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }
}
registerComponent('SreBreaker', SreBreaker)

/** The state a window with `accepts` successes out of `calls` gives (shared with watchers). */
export function sreStats(accepts: number, calls: number, k: number, minimumCalls: number): SreBreakerStats {
  const excess = calls - k * accepts
  const open = calls >= minimumCalls && excess >= 0
  return { accepts, calls, dropProbability: open ? excess / (calls + 1) : 0, state: open ? 'open' : 'closed' }
}

import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import { BreakerOpenError } from '../../foundation/errors/breaker-open-error'
import {
  type ExecuteOptions,
  type GuardedFunction,
  type Outcome,
  runGuarded,
  startError,
} from '../../admission/run-guarded'
import type { Event } from '../../foundation/common/event-source'
import { LiveRules, type RuleStats } from '../../foundation/live-rules/live-rules'
import { BREAKER_SHADOW, placeRules, type RulePlacement } from '../../foundation/live-rules/rule-block'
import type { RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'
import type { SharingOptions } from '../../foundation/regions/sharing-options'
import {
  checkOptions,
  optionalBoolean,
  optionalFunction,
  optionalNumber,
  refuseFields,
  renamedTo,
} from '../../foundation/common/validate'
import type { Breaker } from './breaker'
import { resolveWindowOptions, windowLayout } from './window-options'
import { WindowTally } from './window-tally'
import { BreakerSwitch, forcedOpen, obeysSwitches, resolveSwitches, type Switchboard } from '../switches/breaker-switch'
import { registerComponent } from '../../foundation/common/component-registry'

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

/** The fields of an SreBreaker's rule that `configure` changes at run time. */
export type SreBreakerRule = Partial<Pick<SreBreakerOptions, 'success' | 'minimumCalls'>> & ShadowRule

/** The rule's fields, in the order its block stores them. */
export const SRE_RULE_FIELDS = ['success', 'minimumCalls'] as const

/** `success` and `minimumCalls`, validated (the constructor's checks, and live rules'). */
export function resolveSreRule(o: { success?: unknown; minimumCalls?: unknown }): number[] {
  return [
    optionalNumber('success', o.success, 0.6, { above: 0, max: 1 }),
    optionalNumber('minimumCalls', o.minimumCalls, 100, { integer: true, min: 0, max: 1e12 }),
  ]
}

/**
 * The rule block of an SreBreaker's region, after its window (`bulwark top` lays a snapshot out with it too). The
 * fingerprint keeps the constructor's values: members still pass the same options, and obey the live rule.
 */
export function placeSreRules(layout: RegionLayout, success: number, minimumCalls: number): RulePlacement {
  return placeRules(layout, [success, minimumCalls], BREAKER_SHADOW)
}

export interface SreBreakerStats {
  /** Successes in the window (host-wide when shared). */
  accepts: number
  /** Calls in the window: successes, failures and (with countRejections) rejections. */
  calls: number
  /** Probability that the next call is rejected. */
  dropProbability: number
  state: SreBreakerState
  /** The live rule: its version (0 until `configure` first changed it) and values. */
  rules: RuleStats
}

/**
 * Google SRE client-side adaptive throttling (docs/rules/sre-breaker.md): once the window holds at least
 * `minimumCalls` calls and more than K = 1/success times the accepted ones, each call is rejected with probability
 * max(0, (calls - K * accepts) / (calls + 1)). It needs no timer and no half-open state: the rejection rate falls
 * as successes come back.
 */
export class SreBreaker implements Breaker {
  /** The `shared` name, if any. */
  declare readonly shared: string | undefined
  /** An SreBreaker counts outcomes, not their durations. */
  readonly usesDuration = false
  declare private k: number
  declare private minimumCalls: number
  declare private readonly rules: LiveRules
  declare private readonly countRejections: boolean
  declare private readonly now: () => number
  declare private readonly random: () => number
  declare private readonly region: SharedRegion
  declare private readonly tally: WindowTally
  /** The outcome of an execute() call, reported to this breaker. */
  private readonly outcome: Outcome = {
    passed: (value) => {
      this.recordSuccess()
      return value
    },
    failed: (error) => {
      this.recordFailure()
      throw error
    },
  }
  /** @internal The operators' switches this breaker obeys (undefined: none); its BreakerGroup may add its own. */
  declare switch: BreakerSwitch | undefined

  constructor(options?: SreBreakerOptions) {
    const o = checkOptions<SreBreakerOptions>(options, 'options')
    refuseFields(o, { request: renamedTo('minimumCalls') })
    const [success, minimumCalls] = resolveSreRule(o)
    this.k = 1 / success
    this.minimumCalls = minimumCalls
    this.countRejections = optionalBoolean('countRejections', o.countRejections, true)
    this.random = optionalFunction<() => number>('random', o.random) ?? Math.random
    const board = resolveSwitches(o.switches)
    const w = resolveWindowOptions(o, { window: 3000, buckets: 10 })
    this.shared = w.shared
    this.switch = board === undefined ? undefined : new BreakerSwitch(board, this.shared)
    obeysSwitches(this)
    this.now = w.now
    // In the fingerprint so that members agree, and so that watchers (`bulwark top`) can tell the state.
    const { layout, placement } = windowLayout('sre', w, `success=${success} minimumCalls=${minimumCalls} rules shadow`)
    const rules = placeSreRules(layout, success, minimumCalls)
    this.region = SharedRegion.forComponent(w.shared, layout, w.namespace)
    this.tally = new WindowTally(this.region, placement)
    this.rules = new LiveRules(this.region, rules, {
      fields: SRE_RULE_FIELDS,
      resolve: (rule) => resolveSreRule(rule),
      apply: (values) => {
        this.k = 1 / values[0]
        this.minimumCalls = values[1]
      },
    })
  }

  /** Told each live rule this member starts to obey, at its first call after the change (docs/rules/live-rules.md). */
  get onRuleChange(): Event<RuleStats> {
    return this.rules.onChange
  }

  /**
   * Changes `success` and `minimumCalls` for every member of the host (docs/rules/live-rules.md): validated as the
   * constructor validates them, refused whole (InvalidOptionError) when a field is bad. The window keeps its counts.
   */
  configure(rule: SreBreakerRule): RuleStats {
    return this.rules.configure(rule)
  }

  tryAcquire(): boolean {
    if (this.switch !== undefined) {
      const forced = this.switch.forced()
      if (forced !== undefined) return forced
    }
    const rules = this.rules
    if (rules.i32[rules.index] !== rules.seen) rules.refresh()
    const now = this.now()
    const tally = this.tally
    tally.sync(now)
    const calls = tally.count
    const excess = calls - this.k * tally.sum
    if (calls < this.minimumCalls || excess < 0) return true
    if (this.random() >= excess / (calls + 1)) return true
    if (rules.shadowAdmits(0)) return true // shadow mode: counted, admitted, its outcome recorded as usual
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
    if (!this.tryAcquire()) return Promise.reject(new BreakerOpenError(this.shared, 0, forcedOpen(this)))
    return runGuarded(fn, options?.signal, this.outcome)
  }

  /**
   * 'open' while the window holds enough calls and too few accepts (calls are then rejected at random), by the
   * newest live rule; reading it applies nothing (the rule is applied at the next call).
   */
  get state(): SreBreakerState {
    const tally = this.tally
    tally.sync(this.now())
    const rule = this.rules.pending() // [success, minimumCalls] when a newer rule awaits the next call
    const k = rule === undefined ? this.k : 1 / rule[0]
    return sreStats(tally.sum, tally.count, k, rule === undefined ? this.minimumCalls : rule[1]).state
  }

  stats(): SreBreakerStats {
    this.rules.obey()
    const tally = this.tally
    tally.sync(this.now())
    return { ...sreStats(tally.sum, tally.count, this.k, this.minimumCalls), rules: this.rules.stats() }
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
export function sreStats(
  accepts: number,
  calls: number,
  k: number,
  minimumCalls: number,
): Omit<SreBreakerStats, 'rules'> {
  const excess = calls - k * accepts
  const open = calls >= minimumCalls && excess >= 0
  return { accepts, calls, dropProbability: open ? excess / (calls + 1) : 0, state: open ? 'open' : 'closed' }
}

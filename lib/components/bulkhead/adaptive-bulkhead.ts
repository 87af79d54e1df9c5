import { AdmissionCore } from '../../admission/admission-core'
import { overLimit } from '../../admission/in-flight-check'
import { LatencyController } from '../../admission/limits/latency-controller'
import type { LatencyStats } from '../../admission/limits/latency-stats'
import { PRIORITY_NAMES, Priority, priorityIndex, type PriorityName } from '../../admission/priority'
import { type GuardedFunction, type Outcome, runGuarded, startError } from '../../admission/run-guarded'
import { NOT_SAMPLED } from '../../admission/token-table'
import { TokenOutcomes } from '../../admission/token-outcomes'
import { registerComponent } from '../../foundation/common/component-registry'
import type { Event } from '../../foundation/common/event-source'
import { LiveRules, type RuleStats } from '../../foundation/live-rules/live-rules'
import { BulkheadRejectedError } from '../../foundation/errors/bulkhead-rejected-error'
import { Shed } from '../../foundation/errors/shed'
import { coarseNow } from '../../foundation/signals/clock'
import type { PriorityExecuteOptions } from '../bbr/bbr-options'
import { describeBulkhead, STAT, sumLanes } from './bulkhead-layout'
import {
  type AdaptiveBulkheadOptions,
  type AdaptiveBulkheadRule,
  BULKHEAD_RULE_FIELDS,
  bulkheadRuleValues,
  resolveBulkheadOptions,
  resolveBulkheadRuleValues,
} from './bulkhead-options'

export interface AdaptiveBulkheadStats {
  /** Calls in flight, host-wide when shared. */
  inFlight: number
  /** Calls admitted, host-wide when shared. */
  admitted: number
  /** Calls shed (Shed.latency), host-wide when shared. */
  shed: number
  /** Each priority class's admitted and shed calls. */
  byPriority: Record<PriorityName, { admitted: number; shed: number }>
  /** release() calls with a token that was not outstanding (ignored). */
  invalidReleases: number
  /** What the limit learned from the upstream's latency is. */
  latency: LatencyStats
  /** The live rule: its version (0 until `configure` first changed it), values and shadow mode. */
  rules: RuleStats
}

// Tokens per bulkhead to begin with: there is one bulkhead per upstream, and most hold few calls at a time.
const INITIAL_TOKENS = 64

/**
 * A bulkhead that sizes itself: calls to one upstream are admitted while the upstream keeps up, and held to the
 * limit learned from its latency once it queues (docs/rules/latency.md), so that a saturated upstream gets a
 * bounded number of calls in flight and the calls over it fail at once instead of waiting. One per upstream keeps
 * the others unaffected (the undici and gRPC client guards make one per origin or target).
 *
 * `tryAcquire(priority?)` returns a token >= 0, or Shed.latency; `release(token, measured?)` gives it back exactly
 * once, with `measured = false` for a call that failed without an answer (its time says nothing about the
 * upstream's latency). Neither allocates nor throws. Shareable host-wide with `shared`.
 *
 * Response times are measured with the precise clock on a sample of calls that follows the traffic, as BbrLimiter
 * does (docs/rules/bbr.md, "Clocks and the cost per request"): every call when quiet or while the latency check
 * probes, 32 to 64 per half bucket when busy. With an injected `now`, every call is timed.
 *
 * Its latency tunables and shadow mode change live with `configure` (docs/rules/live-rules.md, docs/rules/shadow.md):
 * a member obeys a change at the check's next step, or at once when it is about to shed, so the admit path reads
 * nothing more.
 */
export class AdaptiveBulkhead extends AdmissionCore {
  declare readonly shared: string | undefined
  declare private readonly shares: Float64Array
  declare private readonly controller: LatencyController
  private stepAt = -Infinity
  declare private readonly capIndex: number
  declare private readonly live: LiveRules
  /**
   * Outcomes of execute() calls: sampled ones hold a token (for their start), the others share `untracked`, its own
   * reactions. A call that rejected says nothing about the upstream's latency (it may have failed without an answer).
   */
  private readonly outcomes = new TokenOutcomes(this.tokens, (ok, token) => this.release(token, ok))
  private readonly untracked: Outcome = {
    passed: (value) => {
      this.finish(NOT_SAMPLED, true)
      return value
    },
    failed: (error) => {
      this.finish(NOT_SAMPLED, false)
      throw error
    },
  }

  constructor(options?: AdaptiveBulkheadOptions) {
    const o = resolveBulkheadOptions(options)
    const now = o.now ?? coarseNow
    const placement = describeBulkhead(o, now(), bulkheadRuleValues(o.latency))
    // Response times of a sample of calls that follows the traffic (every call with an injected `now`).
    const sampling = { every: 1, auto: o.now === undefined, bucketMs: o.window / o.buckets }
    super({ options: o, placement, stat: STAT, now, sampling, initialTokens: INITIAL_TOKENS })
    this.shared = o.shared
    this.shares = o.shares
    const windows = { passes: this.passes, rts: this.rts }
    const inFlight = () => this.inFlightCounter.total()
    this.controller = new LatencyController(this.region, placement.latency, windows, o.latency, inFlight)
    this.capIndex = this.controller.capIndex
    this.live = new LiveRules(this.region, placement.rules, {
      fields: BULKHEAD_RULE_FIELDS,
      resolve: resolveBulkheadRuleValues,
      apply: (values) => this.applyRule(values),
    })
  }

  /** Told each live rule this member starts to obey (at its next step or refusal after the change). */
  get onRuleChange(): Event<RuleStats> {
    return this.live.onChange
  }

  /**
   * Changes the latency tunables (`latency.buffer`, `minLimit`, `maxLimit`, `probeInterval`) and shadow mode for
   * every member of the host: validated as the constructor validates them, refused whole (InvalidOptionError naming
   * the field) when one is bad. The learned limit and base are kept; new bounds apply from the next step.
   */
  configure(rule: AdaptiveBulkheadRule): RuleStats {
    return this.live.configure(rule)
  }

  /** Asks to send one call of class `priority` (default normal): a token >= 0, or Shed.latency. */
  tryAcquire(priority?: number | PriorityName): number {
    // Literals on the pair's path (2 is Priority.normal, -1 NOT_SAMPLED, -2 INVALID): V8 inlines tryAcquire and
    // release into the caller within a budget of bytecode, and an imported name costs it a property load.
    const p = priority === undefined ? 2 : priorityIndex(priority)
    if (this.refuses(p)) return this.shed(p)
    // times[0]: refuses()'s clock reading, handed on in the array (see `times`).
    const token = this.tokens.acquire(this.sampler.startAt(this.times, 0, -1))
    if (token < 0) return this.shed(p)
    this.count(p)
    return token
  }

  /**
   * Whether the latency check sheds a call of class `p` now (the check's step first, when due). Reads the clock
   * itself and leaves the reading in times[0] (see `times`).
   */
  private refuses(p: number): boolean {
    const now = this.now()
    this.times[0] = now
    if (now >= this.stepAt) this.step()
    const cap = this.f64[this.capIndex] // 0 while the upstream keeps up
    return cap > 0 && overLimit(this.inFlightCounter.total(), cap, this.shares[p]) && this.enforces(p)
  }

  /**
   * Whether a call of class `p` that the latency check would shed is shed: in shadow mode (docs/rules/shadow.md) it
   * is counted as a shed it would have made and admitted. The rule is looked at here, on the refusal path only.
   */
  private enforces(p: number): boolean {
    const live = this.live
    if (live.i32[live.index] !== live.seen) live.refresh()
    if (!live.shadow) return true
    live.wouldRefuse(p)
    return false
  }

  /** Counts a shed call of class `p`; returns Shed.latency. */
  private shed(p: number): number {
    this.f64[this.statsBase + STAT.shed + p] += 1
    return Shed.latency
  }

  /** Counts an admitted call of class `p` in flight. */
  private count(p: number): void {
    const f64 = this.f64
    f64[this.ownInFlight] += 1
    f64[this.admittedBase + p] += 1
  }

  /**
   * Gives back an admitted call, exactly once, when it is over. `measured` (default true) says whether its time
   * counts: false for a call that failed without an answer from the upstream (refused connection, reset, aborted
   * by the caller). An unknown, rejected or already released token is ignored and counted.
   */
  release(token: number, measured = true): void {
    const start = this.tokens.release(token)
    if (start !== -2) this.finish(start, measured)
    else this.countInvalidRelease()
  }

  /** What release() does once the call is known to be admitted and not yet released. */
  private finish(start: number, measured: boolean): void {
    this.f64[this.ownInFlight] -= 1
    if (measured !== true) return
    this.times[1] = this.now()
    this.passes.recordAt(1, this.times, 1)
    if (start !== -1) this.recordRt(start)
  }

  /** Records a sampled call's response time (rare when busy: kept out of release(), which V8 then inlines). */
  private recordRt(start: number): void {
    const rt = this.preciseClock() - start
    // times[1]: finish()'s clock reading (not an argument, see `times`).
    this.rts.recordAt(rt > 0 ? rt : 0, this.times, 1)
  }

  /** The latency check's step at times[0]; while it probes, every call is timed (it wants its samples soon). */
  private step(): void {
    this.live.obey() // the tunables the step uses
    this.stepAt = this.controller.step(this.times[0])
    this.sampler.timeAll(this.controller.probing)
  }

  /**
   * Runs `fn` if admitted at `options.priority` (releasing when it settles, measured only when it resolves), else
   * rejects with BulkheadRejectedError. An aborted `options.signal` rejects with AbortedError before acquiring.
   */
  execute<T>(fn: GuardedFunction<T>, options?: PriorityExecuteOptions): Promise<T> {
    const error = startError(fn, options)
    if (error !== undefined) return Promise.reject(error)
    const priority = options?.priority
    const p = priority === undefined ? Priority.normal : priorityIndex(priority)
    if (this.refuses(p)) return this.rejected(p)
    // The call's own outcome releases it, exactly once: no token is needed to guard that, except to carry the
    // start of a sampled call.
    const start = this.sampler.startAt(this.times, 0, NOT_SAMPLED)
    if (start === NOT_SAMPLED) {
      this.count(p)
      return runGuarded(fn, options?.signal, this.untracked)
    }
    const token = this.tokens.acquire(start)
    if (token < 0) return this.rejected(p)
    this.count(p)
    return runGuarded(fn, options?.signal, this.outcomes.of(token))
  }

  /** execute()'s refusal of a call of class `p` (counted). */
  private rejected<T>(p: number): Promise<T> {
    this.shed(p)
    return Promise.reject(new BulkheadRejectedError(this.shared ?? 'the upstream'))
  }

  stats(): AdaptiveBulkheadStats {
    this.live.obey()
    const sum = (cell: number) => sumLanes(this.region, this.statsPlacement, cell)
    const byPriority = {} as AdaptiveBulkheadStats['byPriority']
    let admitted = 0
    let shed = 0
    PRIORITY_NAMES.forEach((name, c) => {
      const counts = { admitted: sum(STAT.admitted + c), shed: sum(STAT.shed + c) }
      byPriority[name] = counts
      admitted += counts.admitted
      shed += counts.shed
    })
    return {
      inFlight: this.inFlight,
      admitted,
      shed,
      byPriority,
      invalidReleases: sum(STAT.invalidReleases),
      latency: this.controller.stats(),
      rules: this.live.stats(),
    }
  }

  /** Obeys a live rule (values in BULKHEAD_RULE_FIELDS order, validated). */
  private applyRule(values: Float64Array): void {
    const [buffer, minLimit, maxLimit, probeInterval] = values
    this.controller.retune({ buffer, minLimit, maxLimit, probeInterval })
  }
}
registerComponent('AdaptiveBulkhead', AdaptiveBulkhead)

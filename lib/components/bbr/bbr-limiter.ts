import { AdmissionCore } from '../../admission/admission-core'
import { Priority, priorityIndex, type PriorityName } from '../../admission/priority'
import type { AdmissionQueue } from '../../admission/queue/admission-queue'
import { LimiterQueue } from '../../admission/queue/limiter-queue'
import { type GuardedFunction, type Outcome, runGuarded, startError } from '../../admission/run-guarded'
import { NOT_SAMPLED } from '../../admission/token-table'
import { TokenOutcomes } from '../../admission/token-outcomes'
import { registerComponent } from '../../foundation/common/component-registry'
import type { Event } from '../../foundation/common/event-source'
import { OverloadError } from '../../foundation/errors/overload-error'
import { Shed, shedReason, type ShedReason } from '../../foundation/errors/shed'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import { signalCells } from '../../foundation/signals/signal-cells'
import { BbrChecks } from './bbr-checks'
import { describeBbr, STAT, sumBbrCounters } from './bbr-layout'
import {
  bbrRuleValues,
  limiterClock,
  resolveBbrOptions,
  type BbrLimiterOptions,
  type BbrLimiterRule,
  type PriorityExecuteOptions,
} from './bbr-options'
import { type BbrLimiterStats, collectBbrStats } from './bbr-stats'
import { CapacityEstimator } from './capacity-estimator'
import { loadSource } from './load-source'

export type { BbrLimiterStats } from './bbr-stats'
export type { PriorityExecuteOptions } from './bbr-options'

/** Seconds an OverloadError from execute() asks the caller to wait: the limiter cannot know when capacity returns. */
const EXECUTE_RETRY_AFTER = 1

/**
 * The BBR adaptive limiter (docs/rules/bbr.md) with the queueing-delay check for synchronous handlers, priorities,
 * and optional host-wide state. tryAcquire and release allocate nothing and never throw.
 *
 * This file holds the per-request path; the checks a request may be shed by, and what is due by time, are BbrChecks.
 */
export class BbrLimiter extends AdmissionCore {
  /** The load for a function signal (and 'elu' without a loop slot); undefined: the larger of two signal cells. */
  declare private readonly loadFn: (() => number) | undefined
  /** The signal cells (a field: reading the imported name costs V8's inlining budget more). */
  private readonly cells = signalCells
  declare private readonly loadCellA: number
  declare private readonly loadCellB: number
  declare private readonly capacity: CapacityEstimator
  declare private readonly checks: BbrChecks
  /** What the usual verdict reads of BbrChecks: the live rules' sequence cell, the last drop and latency cap cells. */
  declare private readonly ruleSequence: Int32Array
  declare private readonly ruleIndex: number
  declare private readonly lastDropIndex: number
  declare private readonly latencyCap: number
  /** f64 index of this member's `load` stat. */
  declare private readonly loadIndex: number
  /** @internal The admission queue (undefined without `maxWait`): execute() and the inbound guards wait in it. */
  declare readonly queue: AdmissionQueue | undefined
  declare private readonly waiting: LimiterQueue | undefined
  // times (AdmissionCore's): [0] the reading and [2] the load of the request being decided, [1] the last release's
  // (the queueing-delay check asks whether requests came since; one in flight shows in ownInFlight).
  /** Outcomes of execute() calls: sampled ones hold a token (for their start), the others share `untracked`. */
  private readonly outcomes = new TokenOutcomes(this.tokens, (_ok, token) => this.release(token))
  // Its own reactions, made in this class (the Outcome type in run-guarded.ts says why).
  private readonly untracked: Outcome = {
    passed: (value) => {
      this.finish(NOT_SAMPLED, true)
      return value
    },
    failed: (error) => {
      this.finish(NOT_SAMPLED, true)
      throw error
    },
  }

  constructor(options?: BbrLimiterOptions) {
    const o = resolveBbrOptions(options)
    const now = limiterClock(o)
    const placement = describeBbr(o, now(), bbrRuleValues(o))
    const sampling = { every: o.rtSampling, auto: o.rtSamplingAuto, bucketMs: o.bucketMs }
    super({ options: o, placement, stat: STAT, now, sampling })
    this.loadIndex = this.statsBase + STAT.load
    this.capacity = new CapacityEstimator(this.passes, this.rts, o.bucketMs, o.minInFlight)
    const load = loadSource(o.signal)
    this.loadFn = load.fn
    this.loadCellA = load.cellA
    this.loadCellB = load.cellB
    this.waiting =
      o.queue &&
      new LimiterQueue(o.queue, {
        now: this.now,
        tryAcquire: (p, key) => this.tryAcquire(p, key),
        forgive: (p, code) => this.checks.forgive(p, code),
        expectedServiceMs: () => this.expectedServiceMs(),
        waitBudget: () => this.checks.delayCheck?.waitBudget() ?? Infinity,
      })
    this.queue = this.waiting?.queue
    this.checks = new BbrChecks(o, {
      region: this.region,
      placement,
      statsBase: this.statsBase,
      passes: this.passes,
      rts: this.rts,
      capacity: this.capacity,
      inFlight: this.inFlightCounter,
      sampler: this.sampler,
      queue: this.queue,
      // minRt as of now: the cached estimate moves only when something asks for the limit, and while the load stays
      // under the threshold nothing else does (the check's target would stay at the floor a fresh limiter starts with).
      serviceTime: () => this.expectedServiceMs(),
      requestsSince: (since) => this.times[1] >= since || this.f64[this.ownInFlight] > 0,
    })
    this.ruleSequence = this.checks.live.i32
    this.ruleIndex = this.checks.live.index
    this.lastDropIndex = this.checks.lastDropIndex
    this.latencyCap = this.checks.latencyCap
  }

  /** Told each live rule this member starts to obey, at its first call after the change (docs/rules/live-rules.md). */
  get onRuleChange(): Event<RuleStats> {
    return this.checks.onChange
  }

  /**
   * Changes the thresholds for every member of the host (docs/rules/live-rules.md): validated as the constructor
   * validates them, refused whole (InvalidOptionError) when a field is bad; every member obeys at its next call.
   */
  configure(rule: BbrLimiterRule): RuleStats {
    return this.checks.configure(rule)
  }

  /**
   * Asks to admit one request of class `priority` (default normal) from `key` (a tenant, an API key; with the
   * `fairness` option, heavy keys are shed first, docs/rules/fairness.md; without it the key is ignored). Returns a
   * token >= 0 to pass to release(), or a negative Shed code when the request is shed: Shed.inFlight,
   * Shed.queueDelay or Shed.latency (`shedReason` names it).
   */
  tryAcquire(priority?: number | PriorityName, key?: string): number {
    // Literals on the pair's path (2 is Priority.normal, -1 NOT_SAMPLED, -2 INVALID): V8 inlines tryAcquire and
    // release into the caller within a budget of bytecode, and an imported name costs it a property load.
    const p = priority === undefined ? 2 : priorityIndex(priority)
    const shed = this.decide(p, key)
    if (shed < 0) return shed
    // times[0]: decide()'s clock reading, handed on in the array (see `times`).
    const token = this.tokens.acquire(this.sampler.startAt(this.times, 0, -1))
    if (token < 0) return this.tableFull(p)
    // count(p), written out: a call costs the inliner's budget more than these two stores.
    const f64 = this.f64
    f64[this.ownInFlight] += 1
    f64[this.admittedBase + p] += 1
    if (key !== undefined) this.checks.admitted(key)
    return token
  }

  /**
   * Every check's verdict on one request of class `p`: ADMIT, or the Shed code (the shed is counted). The usual cases
   * are a few loads and compares, small enough for V8 to inline into the caller: no queue shedding, no fairness, no
   * latency cap, and either the load under the threshold with no drop to cool down from, or the load at or over it
   * with fewer than two requests in flight, which the in-flight check never sheds (a saturated loop running
   * synchronous handlers: this path costs the same as the first). The rest is BbrChecks.decide().
   */
  private decide(p: number, key: string | undefined): number {
    const checks = this.checks
    // Read here, not passed in, and the load left in `times`: V8 may leave decide() or storeLoad() a call.
    const now = this.now()
    this.times[0] = now
    this.storeLoad()
    const load = this.times[2]
    if (now >= checks.dueAt || this.ruleSequence[this.ruleIndex] !== checks.live.seen) this.tick()
    const f64 = this.f64
    // admitBelow is the threshold, or -Infinity while every request goes through BbrChecks.decide().
    const admitBelow = checks.admitBelow
    const usual = load < admitBelow ? f64[this.lastDropIndex] < 0 : admitBelow > 0 && this.inFlightCounter.total() < 2
    // 0 is ADMIT (a literal: an imported name would cost the inliner's budget a property load).
    if (usual && !(f64[this.latencyCap] > 0)) return 0
    return this.ruled(p, key)
  }

  /**
   * What is due by time (BbrChecks.tick, at least once a bucket), and the `load` stat for watchers such as
   * `bulwark top`: stored here, off the usual path, rather than per request.
   */
  private tick(): void {
    this.f64[this.loadIndex] = this.times[2]
    this.checks.tick(this.times[0])
  }

  /**
   * BbrChecks' verdict when the usual cases do not decide (the load stat stored when it changed: the request may be
   * shed; no costlier than storing it every time, callgrind, and no write to the shared line while it holds).
   */
  private ruled(p: number, key: string | undefined): number {
    const load = this.times[2]
    const f64 = this.f64
    if (f64[this.loadIndex] !== load) f64[this.loadIndex] = load
    return this.checks.decide(p, this.times[0], key, load)
  }

  /** Sheds a request of class `p`: this instance's token table is full (rare: kept out of tryAcquire). */
  private tableFull(p: number): number {
    return this.checks.refuse(p, STAT.shedInFlight, Shed.inFlight)
  }

  /**
   * Gives back an admitted request: exactly once per token, when the response is done. Records the pass and (for
   * sampled requests) the response time, unless `measured` is false: a request that failed (a 5xx, say, which a
   * gateway answers at once when its upstream refuses) or was abandoned, whose time says nothing about how long
   * requests take. An unknown, shed or already released token is ignored and counted.
   */
  release(token: number, measured?: boolean): void {
    const start = this.tokens.release(token)
    if (start !== -2) this.finish(start, measured === undefined || measured === true)
    else this.countInvalidRelease()
  }

  /** What release() does once the request is known to be admitted and not yet released. */
  private finish(start: number, measured: boolean): void {
    this.f64[this.ownInFlight] -= 1
    this.times[1] = this.now()
    this.passes.recordAt(1, this.times, 1)
    if (start !== -1 && measured === true) this.recordRt(start)
    if (this.waiting !== undefined) this.slotFreed()
  }

  /** Tells the queue's waiters a slot is free (kept out of finish(): only limiters with `maxWait` queue). */
  private slotFreed(): void {
    // Until the waiters had the slot, arrivals go through BbrChecks.decide(), which sees it is owed.
    if (this.waiting?.slotFreed() === true) this.checks.admitBelow = -Infinity
  }

  /** Records a sampled request's response time (rare: kept out of finish(), which V8 then inlines whole). */
  private recordRt(start: number): void {
    const rt = this.preciseClock() - start
    // times[1]: finish()'s clock reading (not an argument, see `times`).
    this.rts.record(rt > 0 ? rt : 0, this.times[1])
  }

  /** @internal LimiterQueue.waitForSlot; undefined without a queue or when it is full (the refusal stands). */
  waitForSlot(code: number, p: number, key: string | undefined, done: (token: number) => void, deadlineMs?: number) {
    return this.waiting?.waitForSlot(code, p, key, done, deadlineMs)
  }

  /**
   * Runs `fn` if admitted at `options.priority` (releasing when it settles), else rejects with OverloadError
   * (`reason` says which check shed it). An aborted `options.signal` rejects with AbortedError before acquiring.
   */
  execute<T>(fn: GuardedFunction<T>, options?: PriorityExecuteOptions): Promise<T> {
    const error = startError(fn, options)
    if (error !== undefined) return Promise.reject(error)
    const priority = options?.priority
    const p = priority === undefined ? Priority.normal : priorityIndex(priority)
    const shed = this.decide(p, options?.key)
    if (shed < 0) {
      const waiting = this.waiting
      if (waiting === undefined)
        return Promise.reject(new OverloadError(shedReason(shed) as ShedReason, EXECUTE_RETRY_AFTER))
      return waiting.execute(shed, p, options?.key, fn, options?.signal, this.outcomeOf, EXECUTE_RETRY_AFTER)
    }
    // The call's own outcome releases it, exactly once: no token is needed to guard that, except to carry the
    // start of a sampled call.
    if (options?.key !== undefined) this.checks.admitted(options.key)
    const start = this.sampler.startAt(this.times, 0, NOT_SAMPLED)
    if (start === NOT_SAMPLED) {
      this.count(p)
      return runGuarded(fn, options?.signal, this.untracked)
    }
    const token = this.tokens.acquire(start)
    if (token < 0) {
      this.tableFull(p)
      return Promise.reject(new OverloadError('in-flight', EXECUTE_RETRY_AFTER))
    }
    this.count(p)
    return runGuarded(fn, options?.signal, this.outcomes.of(token))
  }

  /**
   * The service time a request can expect, ms: the smallest mean response time of the window's completed buckets
   * (minRt; 1 before any was measured). It is the time without queueing, so a request whose deadline is shorter
   * cannot be served in time (docs/guide/degrade.md, "Deadlines").
   */
  expectedServiceMs(): number {
    this.capacity.limit(this.now())
    return this.capacity.minRt
  }

  /** Whether the limiter was made with `fairness` (keys passed to tryAcquire count). */
  get fair(): boolean {
    return this.checks.fairness !== undefined
  }

  stats(): BbrLimiterStats {
    this.checks.live.obey()
    const maxInFlight = this.capacity.limit(this.now())
    const counters = sumBbrCounters(this.region, this.statsPlacement)
    this.storeLoad()
    const load = this.times[2]
    this.f64[this.loadIndex] = load
    const own = { load, inFlight: this.inFlight, maxInFlight, queue: this.queue?.stats() }
    return collectBbrStats(this.checks, this.capacity, counters, own)
  }

  /** Detaches from a shared region, giving back this instance's requests in flight. Idempotent. */
  override close(): void {
    this.queue?.close()
    this.checks.fairness?.close()
    this.checks.memory?.close()
    super.close()
  }

  /**
   * Counts an admitted request of class `p` in flight. The time of last activity (times[1]) is left to its release:
   * until then the request shows in ownInFlight, which requestsSince() reads too.
   */
  private count(p: number): void {
    const f64 = this.f64
    f64[this.ownInFlight] += 1
    f64[this.admittedBase + p] += 1
  }

  private readonly outcomeOf = (token: number) => this.outcomes.of(token)

  /** The load now, into times[2] (not returned: a double returned by a call V8 did not inline is boxed). */
  private storeLoad(): void {
    const loadFn = this.loadFn
    if (loadFn !== undefined) {
      this.times[2] = loadFn()
      return
    }
    const cells = this.cells
    const a = cells[this.loadCellA]
    const b = cells[this.loadCellB]
    this.times[2] = a > b ? a : b
  }
}
registerComponent('BbrLimiter', BbrLimiter)

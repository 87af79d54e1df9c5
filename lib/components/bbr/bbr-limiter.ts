import { OverloadError } from '../../foundation/errors/overload-error'
import type { Event } from '../../foundation/common/event-source'
import { type GuardedFunction, type Outcome, runGuarded, startError } from '../../admission/run-guarded'
import { TokenOutcomes } from '../../admission/token-outcomes'
import { registerComponent } from '../../foundation/common/component-registry'
import type { AdmissionQueue } from '../../admission/queue/admission-queue'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import { LaneCounter } from '../../foundation/regions/lane-counter'
import type { LanePlacement } from '../../foundation/regions/region-layout'
import { RollingWindow } from '../../foundation/regions/rolling-window'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { Shed, shedReason, type ShedReason } from '../../admission/shed'
import { preciseNow } from '../../foundation/signals/clock'
import { signalCells } from '../../foundation/signals/signal-cells'
import { describeBbr, STAT, sumBbrCounters } from './bbr-layout'
import {
  bbrRuleValues,
  limiterClock,
  resolveBbrOptions,
  type BbrLimiterOptions,
  type BbrLimiterRule,
  type PriorityExecuteOptions,
} from './bbr-options'
import { BbrRules } from './bbr-rules'
import { type BbrLimiterStats, collectBbrStats } from './bbr-stats'
import { CapacityEstimator } from './capacity-estimator'
// Only a limiter with a queue (maxWait) runs it: loaded by the first such limiter.
import { LimiterQueue } from '../../admission/queue/limiter-queue' // bulwark:lazy
import { loadSource } from './load-source'
import { Priority, priorityIndex, type PriorityName } from '../../admission/priority'
import { RtSampler } from '../../admission/rt-sampler'
import { NOT_SAMPLED, TokenTable } from '../../admission/token-table'

export type { BbrLimiterStats } from './bbr-stats'
export type { PriorityExecuteOptions } from './bbr-options'

/** Seconds an OverloadError from execute() asks the caller to wait: the limiter cannot know when capacity returns. */
const EXECUTE_RETRY_AFTER = 1

/**
 * The BBR adaptive limiter (docs/rules/bbr.md) with the queueing-delay rule for synchronous handlers, priorities,
 * and optional host-wide state. tryAcquire and release allocate nothing and never throw.
 *
 * This file holds the per-request path; the rules a request may be shed by, and what is due by time, are BbrRules.
 */
export class BbrLimiter {
  declare private readonly region: SharedRegion
  declare private readonly f64: Float64Array
  declare private readonly now: () => number
  declare private readonly preciseClock: () => number
  /** The load for a function signal (and 'elu' without a loop slot); undefined: the larger of two signal cells. */
  declare private readonly loadFn: (() => number) | undefined
  /** The signal cells (a field: reading the imported name costs V8's inlining budget more). */
  private readonly cells = signalCells
  declare private readonly loadCellA: number
  declare private readonly loadCellB: number
  declare private readonly statsBase: number
  declare private readonly statsPlacement: LanePlacement
  declare private readonly ownInFlight: number
  declare private readonly inFlightCounter: LaneCounter
  declare private readonly passes: RollingWindow
  declare private readonly capacity: CapacityEstimator
  declare private readonly rules: BbrRules
  /** What the usual verdict reads of BbrRules: the live rules' sequence cell, the last drop and latency cap cells. */
  declare private readonly ruleSequence: Int32Array
  declare private readonly ruleIndex: number
  declare private readonly lastDropIndex: number
  declare private readonly latencyCap: number
  /** f64 indexes of this member's `load` stat and of its admitted count of the lowest class. */
  declare private readonly loadIndex: number
  declare private readonly admittedBase: number
  /** @internal The admission queue (undefined without `maxWait`): execute() and the inbound guards wait in it. */
  declare readonly queue: AdmissionQueue | undefined
  declare private readonly waiting: LimiterQueue | undefined
  private readonly tokens = new TokenTable()
  declare private readonly sampler: RtSampler
  declare private readonly rts: RollingWindow
  /**
   * Doubles of the request path, in a typed array: [0] when this instance last released a request (the
   * queueing-delay rule asks; one in flight shows in ownInFlight); [1] the clock reading and [2] the load of the
   * request being decided, which the calls read here rather than take as arguments or return (decide, storeLoad,
   * the sampler's startAt, the window's recordAt). A double passed to or returned from a call V8 did not inline is
   * boxed, and which calls stay calls is V8's choice, process by process: 0, 16 or 32 bytes a pair before every
   * call on the pair's path kept its doubles here, under 1 byte after (Node 20 to 26, measured).
   */
  private readonly times = new Float64Array([-Infinity, -Infinity, 0])
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
    this.now = limiterClock(o)
    this.preciseClock = o.now ?? preciseNow
    const placement = describeBbr(o, this.now(), bbrRuleValues(o))
    const region = SharedRegion.forComponent(o.shared, placement.layout, o.namespace)
    this.region = region
    this.f64 = region.f64
    const base = region.base
    this.statsPlacement = placement.stats
    this.statsBase = (base + placement.stats.offset + region.member * placement.stats.stride) / 8
    this.loadIndex = this.statsBase + STAT.load
    this.admittedBase = this.statsBase + STAT.admitted
    this.inFlightCounter = new LaneCounter(region, placement.inFlight)
    this.ownInFlight = (base + placement.inFlight.offset + region.member * placement.inFlight.stride) / 8
    this.passes = new RollingWindow(region, placement.passes)
    this.rts = new RollingWindow(region, placement.rts)
    this.capacity = new CapacityEstimator(this.passes, this.rts, o.bucketMs, o.minInFlight)
    this.sampler = new RtSampler(o.rtSampling, o.rtSamplingAuto, o.bucketMs, this.preciseClock)

    const load = loadSource(o.signal)
    this.loadFn = load.fn
    this.loadCellA = load.cellA
    this.loadCellB = load.cellB
    this.waiting =
      o.queue &&
      new LimiterQueue(o.queue, {
        now: this.now,
        tryAcquire: (p, key) => this.tryAcquire(p, key),
        forgive: (p, code) => this.rules.forgive(p, code),
        expectedServiceMs: () => this.expectedServiceMs(),
        waitBudget: () => this.rules.delayRule?.waitBudget() ?? Infinity,
      })
    this.queue = this.waiting?.queue
    this.rules = new BbrRules(o, {
      region,
      placement,
      statsBase: this.statsBase,
      passes: this.passes,
      rts: this.rts,
      capacity: this.capacity,
      inFlight: this.inFlightCounter,
      sampler: this.sampler,
      queue: this.queue,
      // minRt as of now: the cached estimate moves only when something asks for the limit, and while the load stays
      // under the threshold nothing else does (the rule's target would stay at the floor a fresh limiter starts with).
      serviceTime: () => this.expectedServiceMs(),
      requestsSince: (since) => this.times[0] >= since || this.f64[this.ownInFlight] > 0,
    })
    this.ruleSequence = this.rules.live.i32
    this.ruleIndex = this.rules.live.index
    this.lastDropIndex = this.rules.lastDropIndex
    this.latencyCap = this.rules.latencyCap
  }

  /** Told each live rule this member starts to obey, at its first call after the change (docs/rules/live-rules.md). */
  get onRuleChange(): Event<RuleStats> {
    return this.rules.onChange
  }

  /**
   * Changes the thresholds for every member of the host (docs/rules/live-rules.md): validated as the constructor
   * validates them, refused whole (InvalidOptionError) when a field is bad; every member obeys at its next call.
   */
  configure(rule: BbrLimiterRule): RuleStats {
    return this.rules.configure(rule)
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
    // times[1]: decide()'s clock reading, handed on in the array (see `times`).
    const token = this.tokens.acquire(this.sampler.startAt(this.times, 1, -1))
    if (token < 0) return this.tableFull(p)
    // count(p), written out: a call costs the inliner's budget more than these two stores.
    const f64 = this.f64
    f64[this.ownInFlight] += 1
    f64[this.admittedBase + p] += 1
    if (key !== undefined) this.rules.admitted(key)
    return token
  }

  /**
   * Every rule's verdict on one request of class `p`: ADMIT, or the Shed code (the shed is counted). The usual cases
   * are a few loads and compares, small enough for V8 to inline into the caller: no queue shedding, no fairness, no
   * latency cap, and either the load under the threshold with no drop to cool down from, or the load at or over it
   * with fewer than two requests in flight, which the in-flight rule never sheds (a saturated loop running
   * synchronous handlers: this path costs the same as the first). The rest is BbrRules.decide().
   */
  private decide(p: number, key: string | undefined): number {
    const rules = this.rules
    // Read here, not passed in, and the load left in `times`: V8 may leave decide() or storeLoad() a call.
    const now = this.now()
    this.times[1] = now
    this.storeLoad()
    const load = this.times[2]
    if (now >= rules.dueAt || this.ruleSequence[this.ruleIndex] !== rules.live.seen) this.tick()
    const f64 = this.f64
    // admitBelow is the threshold, or -Infinity while every request goes through BbrRules.decide().
    const admitBelow = rules.admitBelow
    const usual = load < admitBelow ? f64[this.lastDropIndex] < 0 : admitBelow > 0 && this.inFlightCounter.total() < 2
    // 0 is ADMIT (a literal: an imported name would cost the inliner's budget a property load).
    if (usual && !(f64[this.latencyCap] > 0)) return 0
    return this.ruled(p, key)
  }

  /**
   * What is due by time (BbrRules.tick, at least once a bucket), and the `load` stat for watchers such as
   * `bulwark top`: stored here, off the usual path, rather than per request.
   */
  private tick(): void {
    this.f64[this.loadIndex] = this.times[2]
    this.rules.tick(this.times[1])
  }

  /**
   * BbrRules' verdict when the usual cases do not decide (the load stat stored when it changed: the request may be
   * shed; no costlier than storing it every time, callgrind, and no write to the shared line while it holds).
   */
  private ruled(p: number, key: string | undefined): number {
    const load = this.times[2]
    const f64 = this.f64
    if (f64[this.loadIndex] !== load) f64[this.loadIndex] = load
    return this.rules.decide(p, this.times[1], key, load)
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

  /** Sheds a request of class `p`: this instance's token table is full (rare: kept out of tryAcquire). */
  private tableFull(p: number): number {
    return this.rules.shed(p, STAT.shedInFlight, Shed.inFlight)
  }

  /** Counts a release() of a token that was not outstanding (rare: kept out of release()). */
  private countInvalidRelease(): void {
    this.f64[this.statsBase + STAT.invalidReleases] += 1
  }

  /** What release() does once the request is known to be admitted and not yet released. */
  private finish(start: number, measured: boolean): void {
    this.f64[this.ownInFlight] -= 1
    const now = this.now()
    this.times[0] = now
    this.passes.recordAt(1, this.times, 0)
    if (start !== -1 && measured === true) this.recordRt(start)
    if (this.waiting !== undefined) this.slotFreed()
  }

  /** Tells the queue's waiters a slot is free (kept out of finish(): only limiters with `maxWait` queue). */
  private slotFreed(): void {
    // Until the waiters had the slot, arrivals go through BbrRules.decide(), which sees it is owed.
    if (this.waiting?.slotFreed() === true) this.rules.admitBelow = -Infinity
  }

  /** Records a sampled request's response time (rare: kept out of finish(), which V8 then inlines whole). */
  private recordRt(start: number): void {
    const rt = this.preciseClock() - start
    // times[0]: finish()'s clock reading (not an argument, see `times`).
    this.rts.record(rt > 0 ? rt : 0, this.times[0])
  }

  /** @internal LimiterQueue.waitForSlot; undefined without a queue or when it is full (the refusal stands). */
  waitForSlot(code: number, p: number, key: string | undefined, done: (token: number) => void, deadlineMs?: number) {
    return this.waiting?.waitForSlot(code, p, key, done, deadlineMs)
  }

  /**
   * Runs `fn` if admitted at `options.priority` (releasing when it settles), else rejects with OverloadError
   * (`reason` says which rule shed it). An aborted `options.signal` rejects with AbortedError before acquiring.
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
    if (options?.key !== undefined) this.rules.admitted(options.key)
    const start = this.sampler.startAt(this.times, 1, NOT_SAMPLED)
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
    return this.rules.fairness !== undefined
  }

  /** Requests in flight, host-wide when shared. */
  get inFlight(): number {
    return this.inFlightCounter.total()
  }

  stats(): BbrLimiterStats {
    this.rules.live.obey()
    const maxInFlight = this.capacity.limit(this.now())
    const counters = sumBbrCounters(this.region, this.statsPlacement)
    const load = this.readLoad()
    this.f64[this.loadIndex] = load
    const own = { load, inFlight: this.inFlight, maxInFlight, queue: this.queue?.stats() }
    return collectBbrStats(this.rules, this.capacity, counters, own)
  }

  /** Detaches from a shared region, giving back this instance's requests in flight. Idempotent. */
  close(): void {
    this.queue?.close()
    this.rules.fairness?.close()
    this.rules.memory?.close()
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /**
   * Counts an admitted request of class `p` in flight. The time of last activity (times[0]) is left to its release:
   * until then the request shows in ownInFlight, which requestsSince() reads too.
   */
  private count(p: number): void {
    const f64 = this.f64
    f64[this.ownInFlight] += 1
    f64[this.admittedBase + p] += 1
  }

  private readonly outcomeOf = (token: number) => this.outcomes.of(token)

  private readLoad(): number {
    this.storeLoad()
    return this.times[2]
  }

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

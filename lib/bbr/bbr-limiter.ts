import { overLimit } from '../adaptive/in-flight-rule'
import { LatencyController } from '../adaptive/latency-controller'
import type { LatencyStats } from '../adaptive/latency-stats'
import { OverloadError } from '../errors/overload-error'
import { type ExecuteOptions, type GuardedFunction, outcome, runGuarded, startError } from '../execution/run-guarded'
import { TokenOutcomes } from '../execution/token-outcomes'
import { runQueued } from '../execution/run-queued'
import { AdmissionQueue, type AdmissionQueueStats, type Waiter } from '../policies/admission-queue'
import { LaneCounter } from '../shared/lane-counter'
import type { LanePlacement } from '../shared/region-layout'
import { RollingWindow } from '../shared/rolling-window'
import type { Event } from '../events/event-source'
import { FAIR_HEADROOM, FAIR_MIN_FRACTION, FairShare } from '../policies/fair-share'
import { LiveRules, type RuleStats } from '../rules/live-rules'
import { SharedRegion } from '../shared/shared-region'
import { preciseNow } from '../signals/clock'
import { Shed, shedReason, type ShedReason } from '../shed/shed'
import { cell, loopCell, signalCells } from '../signals/signal-cells'
import { describeBbr, type PriorityCounts, STAT, sumBbrCounters } from './bbr-layout'
import {
  BBR_RULE_FIELDS,
  bbrRuleValues,
  limiterClock,
  resolveBbrOptions,
  resolveBbrRuleValues,
  type BbrLimiterOptions,
  type BbrLimiterRule,
} from './bbr-options'
import { CapacityEstimator } from './capacity-estimator'
import { Priority, priorityIndex, type PriorityName } from './priority'
import type { QueueDelayController } from './queue-delay-controller'
import { queueRule } from './queue-rule'
import { RtSampler } from './rt-sampler'
import { INVALID, NOT_SAMPLED, TokenTable } from './token-table'
import { registerComponent } from '../metrics/component-registry'

/** Seconds an OverloadError from execute() asks the caller to wait: the limiter cannot know when capacity returns. */
const EXECUTE_RETRY_AFTER = 1

/** decide()'s verdict for an admitted request. */
const ADMIT = 0

/** The signal 'elu' on a thread the sampler has no loop slot for: no loop is measured, so its load is 0. */
const NO_LOOP = () => 0

export interface BbrLimiterStats {
  /** The load signal at the last call, permille. */
  load: number
  /** Requests admitted and not yet released, host-wide when shared. */
  inFlight: number
  /** The capacity estimate (never below minInFlight). */
  maxInFlight: number
  maxPass: number
  /** Smallest bucket mean response time, ms (fractional). */
  minRt: number
  /** Admitted requests, host-wide when shared. */
  admitted: number
  /** Shed requests, host-wide when shared (every reason). */
  shed: number
  /** Shed with Shed.inFlight. */
  shedInFlight: number
  /** Shed with Shed.queueDelay. */
  shedQueueDelay: number
  /** Shed with Shed.latency. */
  shedLatency: number
  /** The adaptive concurrency rule (undefined when it is off). */
  latency: LatencyStats | undefined
  /** This thread's event-loop queueing delay at the last control step, ms. */
  queueDelay: number
  /** Share of normal-class requests this thread admits under queueing delay (1 = no shedding). */
  admitFraction: number
  /** The live rule: its version (0 until `configure` first changed it) and values. */
  rules: RuleStats
  /**
   * Fair shedding (undefined when off): the keys over their fair share now, and the requests of light keys decided
   * while some key was heavy.
   */
  fairness: { heavyKeys: string[]; favoured: number } | undefined
  /** This process's admission queue (undefined without `maxWait`, docs/rules/queue.md). */
  queue: AdmissionQueueStats | undefined
  /** release() calls with a token that was not outstanding (ignored). */
  invalidReleases: number
  /** Admitted and shed requests of each priority class, shed split by reason (host-wide when shared). */
  byPriority: Record<PriorityName, PriorityCounts>
}

/** What BbrLimiter.execute takes: the caller's signal and the request's priority class. */
export interface PriorityExecuteOptions extends ExecuteOptions {
  /** The request's priority class (default normal). */
  priority?: number | PriorityName
  /** The request's key for fair shedding (with the `fairness` option). */
  key?: string
}

/**
 * The BBR adaptive limiter (docs/rules/bbr.md) with the queueing-delay rule for synchronous handlers, priorities,
 * and optional host-wide state. tryAcquire and release allocate nothing and never throw.
 */
export class BbrLimiter {
  private readonly region: SharedRegion
  private readonly f64: Float64Array
  private readonly now: () => number
  private readonly preciseClock: () => number
  /** The load for a function signal (and 'elu' without a loop slot); undefined: the larger of two signal cells. */
  private readonly loadFn: (() => number) | undefined
  private readonly loadCellA: number
  private readonly loadCellB: number
  private threshold: number
  private cooldown: number
  private readonly shares: Float64Array
  private readonly lastDropIndex: number
  private readonly maxInFlightIndex: number
  private readonly statsBase: number
  private readonly statsPlacement: LanePlacement
  private readonly ownInFlight: number
  private readonly inFlightCounter: LaneCounter
  private readonly passes: RollingWindow
  private readonly rts: RollingWindow
  private readonly capacity: CapacityEstimator
  private readonly delayRule: QueueDelayController | undefined
  private readonly latencyRule: LatencyController | undefined
  private readonly rules: LiveRules
  /** When the latency rule's next step is due (Infinity without the rule). */
  private latencyStepAt: number
  /** When tick() is next due: the earlier of the two rules' next steps. */
  private dueAt = -Infinity
  /** Whether every request goes through decideRules(): fairness is on, or the queueing-delay rule sheds. */
  private ruled = true
  /** f64 index of this member's `load` stat. */
  private readonly loadIndex: number
  /** f64 index of the latency rule's `cap` cell (-1 without the rule: the load is then undefined, never > 0). */
  private readonly latencyCap: number
  private readonly fairness: FairShare | undefined
  /** @internal The admission queue (undefined without `maxWait`): execute() and the inbound guards wait in it. */
  readonly queue: AdmissionQueue | undefined
  private readonly tokens = new TokenTable()
  private readonly sampler: RtSampler
  /** When this instance last admitted or released a request (its clock): the queueing-delay rule asks. */
  private lastActiveAt = -Infinity
  /** Outcomes of execute() calls: sampled ones hold a token (for their start), the others share `untracked`. */
  private readonly outcomes = new TokenOutcomes(this.tokens, (_ok, token) => this.release(token))
  private readonly untracked = outcome({
    recordSuccess: () => this.finish(NOT_SAMPLED, true),
    recordFailure: () => this.finish(NOT_SAMPLED, true),
  })

  constructor(options?: BbrLimiterOptions) {
    const o = resolveBbrOptions(options)
    this.now = limiterClock(o)
    this.preciseClock = o.now ?? preciseNow
    const placement = describeBbr(o, this.now(), bbrRuleValues(o))
    this.region = SharedRegion.forComponent(o.shared, placement.layout, o.namespace)
    this.f64 = this.region.f64
    const base = this.region.base
    this.lastDropIndex = (base + placement.lastDrop) / 8
    this.maxInFlightIndex = (base + placement.maxInFlight) / 8
    this.statsPlacement = placement.stats
    this.statsBase = (base + placement.stats.offset + this.region.member * placement.stats.stride) / 8
    this.loadIndex = this.statsBase + STAT.load
    this.inFlightCounter = new LaneCounter(this.region, placement.inFlight)
    this.ownInFlight = (base + placement.inFlight.offset + this.region.member * placement.inFlight.stride) / 8
    this.passes = new RollingWindow(this.region, placement.passes)
    this.rts = new RollingWindow(this.region, placement.rts)
    this.capacity = new CapacityEstimator(this.passes, this.rts, o.bucketMs, o.minInFlight)
    this.threshold = o.cpuThreshold
    this.cooldown = o.cooldown
    this.shares = o.shares
    this.sampler = new RtSampler(o.rtSampling, o.rtSamplingAuto, o.bucketMs, this.preciseClock)

    const signal = o.signal
    const elu = loopCell >= 0 ? loopCell + cell.loopElu : -1
    this.loadCellA = signal === 'elu' ? elu : cell.cpuEma
    this.loadCellB = signal === 'cpu' || elu < 0 ? cell.cpuEma : elu
    if (typeof signal === 'function') this.loadFn = signal
    else if (typeof signal === 'object') this.loadFn = signal.load
    else this.loadFn = signal === 'elu' && elu < 0 ? NO_LOOP : undefined
    // minRt as of now: the cached estimate moves only when something asks for the limit, and while the load stays
    // under the threshold nothing else does (the rule's target would stay at the floor a fresh limiter starts with).
    const serviceTime = () => this.expectedServiceMs()
    const onFraction = this.publishFraction
    const requestsSince = (since: number) => this.lastActiveAt >= since || this.f64[this.ownInFlight] > 0
    this.delayRule = o.queueDelay
      ? queueRule(o.queueDelay, signal, { threshold: o.cpuThreshold, serviceTime, onFraction, requestsSince })
      : undefined
    const windows = { passes: this.passes, rts: this.rts }
    const inFlight = () => this.inFlightCounter.total()
    this.latencyRule = o.latency
      ? new LatencyController(this.region, placement.latency, windows, o.latency, inFlight)
      : undefined
    this.latencyStepAt = this.latencyRule === undefined ? Infinity : -Infinity
    this.latencyCap = this.latencyRule === undefined ? -1 : this.latencyRule.capIndex
    this.f64[this.statsBase + STAT.admitFraction] = 1
    this.f64[this.statsBase + STAT.minInFlight] = o.minInFlight
    this.fairness = o.fairness && new FairShare(o.fairness, o.shared, o.maxMembers)
    this.queue = o.queue && new AdmissionQueue(o.queue, this.now, this.retryQueued)
    this.rules = new LiveRules(this.region, placement.rules, {
      fields: BBR_RULE_FIELDS,
      resolve: resolveBbrRuleValues,
      apply: (values) => this.applyRule(values),
    })
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
    const p = priority === undefined ? Priority.normal : priorityIndex(priority)
    const now = this.now()
    const shed = this.decide(p, now, key)
    if (shed < 0) return shed
    const token = this.tokens.acquire(this.sampler.start(now, NOT_SAMPLED))
    if (token < 0) return this.shed(p, STAT.shedInFlight, Shed.inFlight)
    this.count(p)
    if (this.fairness !== undefined && typeof key === 'string') this.fairness.admitted(key)
    return token
  }

  /**
   * Every rule's verdict on one request of class `p`: ADMIT, or the Shed code (the shed is counted). The usual case
   * (load under the threshold, no drop to cool down from, no latency cap, no queue shedding, no fairness) is a few
   * loads and compares, small enough for V8 to inline into the caller; the rest is decideRules().
   */
  private decide(p: number, now: number, key: string | undefined): number {
    const rules = this.rules
    if (now >= this.dueAt || rules.i32[rules.index] !== rules.seen) this.tick(now)
    const load = this.readLoad()
    const f64 = this.f64
    // For stats() and watchers such as `bulwark top`; stored only when it moves (a shared line others read).
    if (f64[this.loadIndex] !== load) f64[this.loadIndex] = load
    if (load < this.threshold && !this.ruled && f64[this.lastDropIndex] < 0 && !(f64[this.latencyCap] > 0)) return ADMIT
    return this.decideRules(p, now, key, load)
  }

  /**
   * What is due by time rather than per request, at most once per step: a new live rule, the queueing-delay rule's
   * step and the latency rule's step (docs/rules/bbr.md).
   */
  private tick(now: number): void {
    this.rules.obey()
    let due = Infinity
    const delayRule = this.delayRule
    if (delayRule !== undefined) {
      delayRule.update(now)
      due = delayRule.nextUpdateAt
    }
    if (now >= this.latencyStepAt) this.latencyStep(now)
    this.dueAt = due < this.latencyStepAt ? due : this.latencyStepAt
    // The queueing-delay rule's fraction only changes at its steps.
    this.ruled =
      this.fairness !== undefined ||
      (delayRule !== undefined && delayRule.active) ||
      (this.queue !== undefined && this.queue.owed)
  }

  /** decide() for a request some rule may shed. */
  private decideRules(p: number, now: number, key: string | undefined, load: number): number {
    // A slot freed for the queue's waiters in this turn is theirs (docs/rules/queue.md).
    if (this.queue !== undefined && this.queue.owed) return this.shed(p, STAT.shedInFlight, Shed.inFlight)
    // A light key while heavy ones exist: the rules below let it through, within FAIR_HEADROOM of their limits.
    const fair = this.fairness !== undefined && typeof key === 'string' && this.fairness.favours(key, now)
    const delayRule = this.delayRule
    // Light keys pass while heavy ones still get some of their requests through; once those are nearly all shed
    // and the delay stays, the light keys are the queue, and the rule applies to them too.
    if (
      delayRule !== undefined &&
      delayRule.active &&
      !(fair && delayRule.fraction >= FAIR_MIN_FRACTION) &&
      !delayRule.admit(p)
    )
      return this.shed(p, STAT.shedDelay, Shed.queueDelay)
    if (load >= this.threshold) {
      if (this.overLimit(now, p, fair)) {
        // Ours: every drop at or over the threshold refreshes the drop time (the reference keeps the first).
        this.f64[this.lastDropIndex] = now
        return this.shed(p, STAT.shedInFlight, Shed.inFlight)
      }
    } else {
      const lastDrop = this.f64[this.lastDropIndex]
      if (lastDrop >= 0) {
        if (now - lastDrop <= this.cooldown) {
          if (this.overLimit(now, p, fair)) return this.shed(p, STAT.shedInFlight, Shed.inFlight)
        } else {
          this.f64[this.lastDropIndex] = -1
        }
      }
    }
    const cap = this.f64[this.latencyCap] // 0 while the latency rule does not shed
    if (cap > 0 && this.exceeds(fair ? cap * FAIR_HEADROOM : cap, p))
      return this.shed(p, STAT.shedLatency, Shed.latency)
    return ADMIT
  }

  /**
   * Gives back an admitted request: exactly once per token, when the response is done. Records the pass and (for
   * sampled requests) the response time, unless `measured` is false: a request that failed (a 5xx, say, which a
   * gateway answers at once when its upstream refuses) or was abandoned, whose time says nothing about how long
   * requests take. An unknown, shed or already released token is ignored and counted.
   */
  release(token: number, measured = true): void {
    const start = this.tokens.release(token)
    if (start === INVALID) {
      this.f64[this.statsBase + STAT.invalidReleases] += 1
      return
    }
    this.finish(start, measured)
  }

  /** What release() does once the request is known to be admitted and not yet released. */
  private finish(start: number, measured: boolean): void {
    this.f64[this.ownInFlight] -= 1
    const now = this.now()
    this.lastActiveAt = now
    this.passes.record(1, now)
    if (start !== NOT_SAMPLED && measured === true) this.recordRt(start, now)
    if (this.queue !== undefined && this.queue.length > 0) {
      this.queue.slotFreed()
      this.ruled = true // until the waiters had the slot, arrivals go through decideRules(), which sees it is owed
    }
  }

  /** Records a sampled request's response time (rare: kept out of finish(), which V8 then inlines whole). */
  private recordRt(start: number, now: number): void {
    const rt = this.preciseClock() - start
    this.rts.record(rt > 0 ? rt : 0, now)
  }

  /**
   * @internal Lets a request that tryAcquire refused with `code` wait in the queue (its refusal is then not counted):
   * `done(token)` is called once, later, with a token, Shed.queueTimeout, or Shed.deadline once fewer than
   * expectedServiceMs() of the request's own `deadlineMs` (ms left when it starts waiting) would be left. Undefined
   * without a queue or when it is full (the refusal stands).
   */
  waitForSlot(
    code: number,
    p: number,
    key: string | undefined,
    done: (token: number) => void,
    deadlineMs?: number,
  ): Waiter | undefined {
    const queue = this.queue
    if (queue === undefined) return undefined
    if (!queue.hasRoom) {
      queue.countFull()
      return undefined
    }
    this.forgive(p, code)
    const until = deadlineMs === undefined ? Infinity : this.now() + deadlineMs - this.expectedServiceMs()
    return queue.wait(p, key, done, until)
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
    const now = this.now()
    const shed = this.decide(p, now, options?.key)
    if (shed < 0) {
      if (this.queue === undefined)
        return Promise.reject(new OverloadError(shedReason(shed) as ShedReason, EXECUTE_RETRY_AFTER))
      const wait = (done: (token: number) => void) => this.waitForSlot(shed, p, options?.key, done)
      return runQueued(wait, shed, fn, options?.signal, this.outcomeOf, EXECUTE_RETRY_AFTER)
    }
    // The call's own outcome releases it, exactly once: no token is needed to guard that, except to carry the
    // start of a sampled call.
    if (this.fairness !== undefined && typeof options?.key === 'string') this.fairness.admitted(options.key)
    const start = this.sampler.start(now, NOT_SAMPLED)
    if (start === NOT_SAMPLED) {
      this.count(p)
      return runGuarded(fn, options?.signal, this.untracked)
    }
    const token = this.tokens.acquire(start)
    if (token < 0) {
      this.shed(p, STAT.shedInFlight, Shed.inFlight)
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
    return this.fairness !== undefined
  }

  /** Requests in flight, host-wide when shared. */
  get inFlight(): number {
    return this.inFlightCounter.total()
  }

  stats(): BbrLimiterStats {
    this.rules.obey()
    const now = this.now()
    const maxInFlight = this.capacity.limit(now)
    const counters = sumBbrCounters(this.region, this.statsPlacement)
    return {
      load: this.f64[this.statsBase + STAT.load],
      inFlight: this.inFlight,
      maxInFlight,
      maxPass: this.capacity.maxPass,
      minRt: this.capacity.minRt,
      admitted: counters.admitted,
      shed: counters.shedInFlight + counters.shedQueueDelay + counters.shedLatency,
      shedInFlight: counters.shedInFlight,
      shedQueueDelay: counters.shedQueueDelay,
      shedLatency: counters.shedLatency,
      latency: this.latencyRule?.stats(),
      queueDelay: this.delayRule?.measuredDelay ?? 0,
      admitFraction: this.delayRule?.fraction ?? 1,
      invalidReleases: counters.invalidReleases,
      byPriority: counters.byPriority,
      rules: this.rules.stats(),
      fairness: this.fairness && { heavyKeys: this.fairness.heavyKeys(), favoured: this.fairness.favoured },
      queue: this.queue?.stats(),
    }
  }

  /** Detaches from a shared region, giving back this instance's requests in flight. Idempotent. */
  close(): void {
    this.queue?.close()
    this.fairness?.close()
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /**
   * Counts an admitted request of class `p` in flight. lastActiveAt is left to its release: until then the request
   * shows in ownInFlight, which requestsSince() reads too.
   */
  private count(p: number): void {
    this.f64[this.ownInFlight] += 1
    this.f64[this.statsBase + STAT.admitted + p] += 1
  }

  /** Obeys a live rule (values in BBR_RULE_FIELDS order, validated). */
  private applyRule(values: Float64Array): void {
    this.threshold = values[0]
    this.cooldown = values[1]
    this.capacity.setFloor(values[2])
    this.f64[this.statsBase + STAT.minInFlight] = values[2]
    this.delayRule?.retune(values[3], values[4])
  }

  /**
   * The latency rule's step, once every quarter bucket. While it probes, every response time is measured: a probe
   * holds the upstream under its capacity until it has its samples, so the sooner it has them the less it costs.
   */
  private latencyStep(now: number): void {
    const rule = this.latencyRule as LatencyController
    this.latencyStepAt = rule.step(now)
    this.sampler.timeAll(rule.probing)
  }

  /** A queued request asks again; a refusal is not counted (it still waits). */
  private readonly retryQueued = (p: number, key: string | undefined): number => {
    const token = this.tryAcquire(p, key)
    if (token < 0) this.forgive(p, token)
    return token
  }

  private readonly outcomeOf = (token: number) => this.outcomes.of(token)

  /** Takes back the count of a refusal whose request waits in the queue instead of being shed. */
  private forgive(p: number, code: number): void {
    const stat =
      code === Shed.queueDelay ? STAT.shedDelay : code === Shed.latency ? STAT.shedLatency : STAT.shedInFlight
    this.f64[this.statsBase + stat + p] -= 1
  }

  private shed(p: number, reason: number, result: number): number {
    this.f64[this.statsBase + reason + p] += 1
    return result
  }

  private overLimit(now: number, p: number, fair: boolean): boolean {
    // Nothing is shed below two requests in flight (see overLimit): the estimate is not needed then.
    const inFlight = this.inFlightCounter.total()
    if (!(inFlight > 1)) return false
    const limit = this.capacity.limit(now)
    // Written for watchers only when it changes: every member writing this one cell per request would bounce its
    // cache line between their cores.
    if (this.f64[this.maxInFlightIndex] !== limit) this.f64[this.maxInFlightIndex] = limit
    return overLimit(inFlight, fair ? limit * FAIR_HEADROOM : limit, this.shares[p])
  }

  /**
   * The one place a limit on requests in flight meets a request's class: whether the host's requests in flight
   * (the one being decided excluded) are over the class's share of `limit`. Every in-flight rule sheds here.
   */
  private exceeds(limit: number, p: number): boolean {
    return overLimit(this.inFlightCounter.total(), limit, this.shares[p])
  }

  private readonly publishFraction = (fraction: number): void => {
    this.f64[this.statsBase + STAT.admitFraction] = fraction
  }

  private readLoad(): number {
    const loadFn = this.loadFn
    if (loadFn !== undefined) return loadFn()
    const a = signalCells[this.loadCellA]
    const b = signalCells[this.loadCellB]
    return a > b ? a : b
  }
}
registerComponent('BbrLimiter', BbrLimiter)

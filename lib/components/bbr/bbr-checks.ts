import { overLimit } from '../../admission/in-flight-check'
import { LatencyController } from '../../admission/limits/latency-controller'
import type { Event } from '../../foundation/common/event-source'
import type { AdmissionQueue } from '../../admission/queue/admission-queue'
import { FAIR_HEADROOM, FAIR_MIN_FRACTION, FairShare, fairnessKeeperName } from '../../admission/queue/fair-share'
import { HeavyKeeper } from '../hotkeys/heavy-keeper'
import { LiveRules, type RuleStats } from '../../foundation/live-rules/live-rules'
import type { LaneCounter } from '../../foundation/regions/lane-counter'
import type { RollingWindow } from '../../foundation/regions/rolling-window'
import type { SharedRegion } from '../../foundation/regions/shared-region'
import { Shed } from '../../foundation/errors/shed'
import { type BbrPlacement, shadowSlot, STAT } from './bbr-layout'
import { BBR_RULE_FIELDS, type BbrLimiterRule, type ResolvedBbrOptions, resolveBbrRuleValues } from './bbr-options'
import type { CapacityEstimator } from './capacity-estimator'
import type { QueueDelayController } from '../../admission/limits/queue-delay-controller'
import { queueDelayCheck } from '../../admission/limits/queue-delay-check'
import type { RtSampler } from '../../admission/rt-sampler'
import { MemoryCheck } from './memory-check'

/** A verdict of BbrChecks.decide for an admitted request. */
export const ADMIT = 0

/** What BbrChecks needs from its limiter: its windows, estimate, counters and sampler, and two questions. */
export interface BbrCheckParts {
  region: SharedRegion
  placement: BbrPlacement
  statsBase: number
  passes: RollingWindow
  rts: RollingWindow
  capacity: CapacityEstimator
  inFlight: LaneCounter
  sampler: RtSampler
  /** The limiter's admission queue (undefined without `maxWait`): a slot it is owed sheds arrivals. */
  queue: AdmissionQueue | undefined
  /** The service time a request can expect, ms (the queueing-delay check's target floor). */
  serviceTime: () => number
  /** Whether this member admitted or released a request since `since`, or holds one now. */
  requestsSince: (since: number) => boolean
}

/**
 * BbrLimiter's rules off its usual path (docs/rules/bbr.md): the CPU check with its cooldown, the queueing-delay
 * rule, the latency check, fairness and live rules, and what is due by time rather than per request. BbrLimiter
 * asks only when a request may be shed (decide) or when tick() is due, so that its own admit path stays a few
 * loads and compares that V8 inlines into the caller.
 */
export class BbrChecks {
  /** When tick() is next due: the earlier of the two checks' next steps (-Infinity: at the first call). */
  dueAt = -Infinity
  /**
   * A load under this admits without asking decide(): the CPU threshold, or -Infinity while every request goes
   * through decide() (fairness is on, or the queueing-delay check sheds).
   */
  admitBelow = -Infinity
  /** f64 index of the cell of the last drop (-1: none to cool down from). */
  declare readonly lastDropIndex: number
  /** f64 index of the latency check's `cap` cell (0 while it does not shed; -1 without the check). */
  declare readonly latencyCap: number
  declare readonly live: LiveRules
  declare readonly delayCheck: QueueDelayController | undefined
  declare readonly latencyCheck: LatencyController | undefined
  declare readonly fairness: FairShare | undefined
  /** The memory signals (undefined without the `memory` option): one over its threshold acts as a load over it. */
  declare readonly memory: MemoryCheck | undefined
  /** A memory signal was over its threshold at the last tick. */
  private memoryOver = false
  declare private threshold: number
  declare private cooldown: number
  declare private readonly f64: Float64Array
  declare private readonly statsBase: number
  declare private readonly shares: Float64Array
  declare private readonly maxInFlightIndex: number
  declare private readonly parts: BbrCheckParts
  /** When the latency check's next step is due (Infinity without the check). */
  declare private latencyStepAt: number
  declare private readonly bucketMs: number

  constructor(o: ResolvedBbrOptions, parts: BbrCheckParts) {
    const { region, placement, statsBase } = parts
    this.parts = parts
    this.f64 = region.f64
    this.statsBase = statsBase
    this.lastDropIndex = (region.base + placement.lastDrop) / 8
    this.maxInFlightIndex = (region.base + placement.maxInFlight) / 8
    this.bucketMs = o.bucketMs
    this.threshold = o.cpuThreshold
    this.cooldown = o.cooldown
    this.shares = o.shares
    const onFraction = (fraction: number) => {
      this.f64[statsBase + STAT.admitFraction] = fraction
    }
    const { serviceTime, requestsSince } = parts
    this.delayCheck = o.queueDelay
      ? queueDelayCheck(o.queueDelay, o.signal, { threshold: o.cpuThreshold, serviceTime, onFraction, requestsSince })
      : undefined
    const windows = { passes: parts.passes, rts: parts.rts }
    const inFlight = () => parts.inFlight.total()
    this.latencyCheck = o.latency
      ? new LatencyController(region, placement.latency, windows, o.latency, inFlight)
      : undefined
    this.latencyStepAt = this.latencyCheck === undefined ? Infinity : -Infinity
    this.latencyCap = this.latencyCheck === undefined ? -1 : this.latencyCheck.capIndex
    this.f64[statsBase + STAT.admitFraction] = 1
    this.f64[statsBase + STAT.minInFlight] = o.minInFlight
    const fair = o.fairness
    this.fairness =
      fair &&
      new FairShare(
        fair,
        new HeavyKeeper({ k: fair.k, shared: fairnessKeeperName(o.shared), maxMembers: o.maxMembers }),
      )
    this.memory = o.memory && new MemoryCheck(o.memory)
    this.live = new LiveRules(region, placement.rules, {
      fields: BBR_RULE_FIELDS,
      resolve: resolveBbrRuleValues,
      apply: (values) => this.applyRule(values),
    })
  }

  get onChange(): Event<RuleStats> {
    return this.live.onChange
  }

  configure(rule: BbrLimiterRule): RuleStats {
    return this.live.configure(rule)
  }

  /**
   * What is due by time rather than per request, at most once per step: a new live rule, the queueing-delay check's
   * step and the latency check's step, and at least once a bucket. Sets dueAt and admitBelow.
   */
  tick(now: number): void {
    this.live.obey()
    let due = Infinity
    const delayCheck = this.delayCheck
    if (delayCheck !== undefined) {
      delayCheck.update(now)
      due = delayCheck.nextUpdateAt
    }
    if (now >= this.latencyStepAt) this.latencyStep(now)
    // At least once a bucket: the limiter stores its `load` stat for watchers at each tick.
    const next = due < this.latencyStepAt ? due : this.latencyStepAt
    const bucketLater = now + this.bucketMs
    this.dueAt = bucketLater < next ? bucketLater : next
    // The queueing-delay check's fraction only changes at its steps, the threshold only with a live rule; a slot
    // owed to the queue's waiters makes finish() set admitBelow at once.
    const queue = this.parts.queue
    const memory = this.memory
    this.memoryOver = memory !== undefined && memory.update(now)
    const ruled =
      this.memoryOver ||
      this.fairness !== undefined ||
      (delayCheck !== undefined && delayCheck.active) ||
      (queue !== undefined && queue.owed)
    this.admitBelow = ruled ? -Infinity : this.threshold
  }

  /** Every check's verdict on one request of class `p` at `load`: ADMIT, or the Shed code (the shed is counted). */
  decide(p: number, now: number, key: string | undefined, load: number): number {
    // A slot freed for the queue's waiters in this turn is theirs (docs/rules/queue.md).
    const queue = this.parts.queue
    if (queue !== undefined && queue.owed) return this.shed(p, STAT.shedInFlight, Shed.inFlight)
    // A light key while heavy ones exist: the checks below let it through, within FAIR_HEADROOM of their limits.
    const fair = this.fairness !== undefined && typeof key === 'string' && this.fairness.favours(key, now)
    const delayCheck = this.delayCheck
    // Light keys pass while heavy ones still get some of their requests through; once those are nearly all shed
    // and the delay stays, the light keys are the queue, and the check applies to them too.
    if (
      delayCheck !== undefined &&
      delayCheck.active &&
      !(fair && delayCheck.fraction >= FAIR_MIN_FRACTION) &&
      !delayCheck.admit(p)
    )
      return this.shed(p, STAT.shedDelay, Shed.queueDelay)
    if (load >= this.threshold || this.memoryOver) {
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
    const cap = this.f64[this.latencyCap] // 0 while the latency check does not shed
    if (cap > 0 && overLimit(this.parts.inFlight.total(), fair ? cap * FAIR_HEADROOM : cap, this.shares[p]))
      return this.shed(p, STAT.shedLatency, Shed.latency)
    return ADMIT
  }

  /** Tells fairness (when on) that a request of `key` was admitted. */
  admitted(key: string): void {
    if (this.fairness !== undefined && typeof key === 'string') this.fairness.admitted(key)
  }

  /**
   * Counts a shed request of class `p` under stat `reason`; returns its Shed code `result`. In shadow mode
   * (docs/rules/shadow.md) counts it as a shed it would have made instead, and admits it.
   */
  shed(p: number, reason: number, result: number): number {
    if (this.live.shadow) return this.shadowAdmit(p, reason)
    this.f64[this.statsBase + reason + p] += 1
    return result
  }

  /** A shed in shadow mode: counted as one it would have made (by reason and class), and admitted. */
  private shadowAdmit(p: number, reason: number): number {
    this.live.wouldRefuse(shadowSlot(reason, p))
    return ADMIT
  }

  /** Counts a shed request of class `p` under stat `reason`, in shadow mode too; returns its Shed code `result`. */
  refuse(p: number, reason: number, result: number): number {
    this.f64[this.statsBase + reason + p] += 1
    return result
  }

  /** Takes back the count of a refusal whose request waits in the queue instead of being shed. */
  forgive(p: number, code: number): void {
    const stat =
      code === Shed.queueDelay ? STAT.shedDelay : code === Shed.latency ? STAT.shedLatency : STAT.shedInFlight
    this.f64[this.statsBase + stat + p] -= 1
  }

  private overLimit(now: number, p: number, fair: boolean): boolean {
    // Nothing is shed below two requests in flight (see overLimit): the estimate is not needed then.
    const inFlight = this.parts.inFlight.total()
    if (!(inFlight > 1)) return false
    const limit = this.parts.capacity.limit(now)
    // Written for watchers only when it changes: every member writing this one cell per request would bounce its
    // cache line between their cores.
    if (this.f64[this.maxInFlightIndex] !== limit) this.f64[this.maxInFlightIndex] = limit
    return overLimit(inFlight, fair ? limit * FAIR_HEADROOM : limit, this.shares[p])
  }

  /** Obeys a live rule (values in BBR_RULE_FIELDS order, validated). */
  private applyRule(values: Float64Array): void {
    this.threshold = values[0]
    this.cooldown = values[1]
    this.parts.capacity.setFloor(values[2])
    this.f64[this.statsBase + STAT.minInFlight] = values[2]
    this.delayCheck?.retune(values[3], values[4])
    this.dueAt = -Infinity // admitBelow follows the threshold at the next call
  }

  /**
   * The latency check's step, once every quarter bucket. While it probes, every response time is measured: a probe
   * holds the upstream under its capacity until it has its samples, so the sooner it has them the less it costs.
   */
  private latencyStep(now: number): void {
    const check = this.latencyCheck as LatencyController
    this.latencyStepAt = check.step(now)
    this.parts.sampler.timeAll(check.probing)
  }
}

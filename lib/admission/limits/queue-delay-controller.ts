import { DELAY_EXPONENTS } from '../priority'

/** What the controller reads at each step. */
export interface QueueSignal {
  /** The loop's queueing delay, ms. */
  delay: () => number
  /** True when the loop had no idle moment in the last measurement (it never caught up). */
  saturated: () => boolean
  /** When the delay was last measured; a step is taken only on a new measurement. Absent: every 25 ms. */
  measuredAt?: () => number
  /** How long one measurement spans, ms (with measuredAt; absent: from the previous step). */
  span?: () => number
  /**
   * Whether the limiter had a request in flight at any moment since `since` (on the limiter's clock). A loop that
   * was busy while the limiter admitted nothing (start-up work, a timer's batch job) is not overload caused by
   * requests: shedding would refuse requests for work they did not cause.
   */
  requestsSince?: (since: number) => boolean
  /** The requests' smallest mean response time, ms (see SERVICE_TIME_SHARE). */
  serviceTime?: () => number
  /** Told each new admit fraction (the limiter publishes it for watchers), never on the request path otherwise. */
  onFraction?: (fraction: number) => void
  /**
   * How long the loop's current turn has run when a request is decided, ms (lib/foundation/signals/loop-turn.ts). Absent
   * (injected signals): no turn budget.
   */
  turnAge?: () => number
}

export interface QueueDelayOptions {
  /** Queueing delay the loop may keep, ms (default 10). */
  target: number
  /** How long the delay must stay above target before shedding starts, ms (default 100). */
  interval: number
}

/** How often the controller re-reads an injected delay, ms of the limiter's clock. */
const CONTROL_STEP = 25
/**
 * The target is never below this share of the requests' smallest mean response time: a loop running handlers of
 * c ms each has stretches of c, 2c... with no queue at all, so a target below c would read every pair of requests
 * arriving together as a standing queue. (0.75 was measured in bench/overload: 0.5 over-sheds at 1x capacity, 1
 * lets the admitted p99 grow at 4x.)
 */
const SERVICE_TIME_SHARE = 0.75
/** Never admit less than this share of a class: some traffic must flow to measure recovery. */
const MIN_ADMIT = 0.02
/** Bounds on one step's change of the admit fraction: large enough to react in a few steps, small enough to settle. */
const MAX_CUT = 0.7
const MAX_RAISE = 1.25
/**
 * After a cut, the fraction that overloaded the loop is close: for this long, raise it by small additive steps
 * (the delay of a Node loop jumps from a few ms to tens of ms within a few percent of capacity, so a
 * multiplicative raise would overshoot and oscillate). Later, raise multiplicatively to recover fast.
 */
const CAREFUL_AFTER_CUT = 1000
const CAREFUL_STEP = 0.02
/**
 * While the queue stands, the turn budget of each class (critical, high, normal, low) as a multiple of the target:
 * a request decided once its loop turn has run longer than that has already waited as long behind the turn's
 * earlier requests, and admitting it would hold every request still unread in the kernel longer. Critical's is
 * large: it is shed only when critical traffic alone overloads the loop (docs/rules/bbr.md, "The turn budget").
 * Normal's is half the target: in a model of a worker (test/bbr/event-loop-sim.ts, 8 ms handlers) that took the
 * admitted p99 from 73 to 50 ms at 4x and 64 to 53 ms at 10x against a whole target, with the same goodput. A queue's
 * waiters are left out of it (queue-delay-check.ts), or they would lose their slots to later arrivals.
 */
const TURN_BUDGET = [5, 2, 0.5, 0.25]
/**
 * Before the queue has stood for `interval`, while the last measurement found one (the loop saturated, the delay over
 * target), the turn budget of each class as a multiple of the target: a burst shorter than the interval builds its
 * backlog in the kernel, where only the turn's age shows it, and what it admits sets the admitted p99 (bench/overload
 * burst, 1.2x capacity for 200 ms). In the event-loop model (test/bbr/event-loop-sim.ts, 8 ms handlers) such bursts
 * shed 94 -> 65 requests in 1 120 and the admitted p99 went from 90 to 66 ms (unloaded 28): a queue that is seen
 * early is not cut later. Normal's is the whole target, twice the standing one: the queue is not standing yet.
 */
const EARLY_TURN_BUDGET = [5, 2, 1, 0.5]
/**
 * While the check acts, how long an admission queue's waiter may wait, from the start of the loop turn that refused it
 * until its handler starts, as a multiple of the target (the queueing delay the check holds; never below 0.75 of the
 * service time): a waiter that waited all of maxWait and then ran answered after its service time plus maxWait, past
 * the admitted p99 of the requests the check admits (issue 16: 2.5x the unloaded p99). In the event-loop model
 * (test/bbr/event-loop-sim.ts, square-wave bursts of 1.2x for 200 ms, maxWait 50) the admitted p99 went from 93 to
 * 69.5 ms (unloaded 28), 51 shed of 1 080 against 59 at once. 1.25-2 times the target: p99 74-79 ms.
 */
const WAIT_BOUND = 1

/**
 * Sheds for the queue Node hides, the way CoDel does. A synchronous handler finishes within one tick, so requests
 * in flight stay near zero while work piles up in front of the event loop; what grows is the time the loop goes
 * without returning to poll. A queue is standing when the loop never catches up (no idle moment) and even its
 * shortest busy stretch is over `target`; when that has lasted `interval`, each new measurement multiplies the
 * admit fraction by sqrt(target / delay), bounded per step: the further over target, the more is shed. Requiring a
 * saturated loop keeps coarse-grained handlers (10 ms of CPU each) from being shed while the loop still idles.
 *
 * Admission is deterministic (error diffusion, no random draw): each class accumulates its fraction as credit and
 * is admitted whenever a whole unit is available, so a fraction of 0.25 admits exactly every fourth request.
 *
 * The fraction bounds how many requests are admitted, not how long they waited: with the turn's age (`turnAge`),
 * once the queue has stood for `interval` and until the loop idles, a request decided after its turn has run past
 * its class's budget is shed too, so turns, and the wait of what is still in the kernel, stay short.
 */
export class QueueDelayController {
  private target: number
  private interval: number
  private readonly signal: QueueSignal
  private lastMeasuredAt = -1
  private admitFraction = 1
  private readonly classFraction = new Float64Array([1, 1, 1, 1])
  private readonly credit = new Float64Array(4)
  private standingSince = -1
  private nextStepAt = -Infinity
  private lastDelay = 0
  /** The target as the last step applied it (never below SERVICE_TIME_SHARE of the service time). */
  private appliedTarget: number
  private lastCutAt = -Infinity
  private lastStepAt = -Infinity
  /** While true (a standing queue has lasted `interval`, and the loop has not idled since), turns are budgeted. */
  private budgeting = false
  private readonly turnBudget = new Float64Array(4)
  /** While true (the last measurement found a queue, not yet standing for `interval`), turns get the early budget. */
  private early = false
  private readonly earlyBudget = new Float64Array(4)

  constructor(options: QueueDelayOptions, signal: QueueSignal) {
    this.signal = signal
    this.target = options.target
    this.interval = options.interval
    this.appliedTarget = options.target
    this.setBudgets()
  }

  /** True while the controller sheds some class (the fast path skips it otherwise). */
  get active(): boolean {
    return this.admitFraction < 1 || this.budgeting || this.early
  }

  get fraction(): number {
    return this.admitFraction
  }

  /** When update() next does anything: calls before it return at once. */
  get nextUpdateAt(): number {
    return this.nextStepAt
  }

  get measuredDelay(): number {
    return this.lastDelay
  }

  /** Takes a new target and interval (a live rule changed them); the current admit fraction carries on. */
  retune(target: number, interval: number): void {
    this.target = target
    this.interval = interval
    this.setBudgets()
  }

  /** Re-reads the signal and adjusts the admit fraction, at most once per measurement. */
  update(now: number): void {
    if (now < this.nextStepAt) return
    this.nextStepAt = now + CONTROL_STEP
    const signal = this.signal
    // What the measurement covers: the sampler's last tick, or (injected signals) the time since the last step.
    let spanStart = this.lastStepAt === -Infinity ? now - CONTROL_STEP : this.lastStepAt
    this.lastStepAt = now
    const measuredAt = signal.measuredAt
    if (measuredAt !== undefined) {
      const at = measuredAt()
      if (at === this.lastMeasuredAt) return
      this.lastMeasuredAt = at
      spanStart = now - (signal.span?.() ?? CONTROL_STEP)
    }
    const d = signal.delay()
    this.lastDelay = d
    const serviceTime = signal.serviceTime
    const target = serviceTime === undefined ? this.target : Math.max(this.target, SERVICE_TIME_SHARE * serviceTime())
    this.appliedTarget = target
    const requests = signal.requestsSince === undefined || signal.requestsSince(spanStart)
    const saturated = signal.saturated()
    // Turns stay budgeted until the loop idles: budgeting is what keeps the delay down meanwhile (and may shed every
    // request of a span, so a span without admitted requests does not end it).
    if (!saturated) this.budgeting = false
    this.early = false
    if (d > target && saturated && requests) {
      if (this.standingSince < 0) this.standingSince = now
      if (now - this.standingSince < this.interval) {
        this.early = signal.turnAge !== undefined && !this.budgeting
        return
      }
      this.budgeting = signal.turnAge !== undefined
      // A cut shows in the delay only a measurement later: one cut per interval unless the delay keeps exploding.
      if (now - this.lastCutAt < this.interval && d < 4 * target) return
      this.lastCutAt = now
      this.setFraction(this.admitFraction * Math.max(MAX_CUT, Math.sqrt(target / d)))
      return
    }
    this.standingSince = -1
    if (this.admitFraction === 1) return
    if (now - this.lastCutAt < CAREFUL_AFTER_CUT || d > target) {
      this.setFraction(this.admitFraction + CAREFUL_STEP)
    } else {
      this.setFraction(this.admitFraction * Math.min(MAX_RAISE, Math.sqrt(target / Math.max(d, 1e-3))))
    }
  }

  /**
   * How much longer a request refused now may wait in an admission queue, ms (docs/rules/queue.md, "A waiter's
   * bound"): while the check acts, WAIT_BOUND x the target less the age of the turn that refused it; otherwise, and
   * without the turn's age, Infinity (maxWait alone bounds it).
   */
  waitBudget(): number {
    const age = this.signal.turnAge
    if (age === undefined || !this.active) return Infinity
    return WAIT_BOUND * this.appliedTarget - age()
  }

  /** Whether a request of class `priority` is admitted: within its turn budget, and under the current fraction. */
  admit(priority: number): boolean {
    if (this.budgeting) {
      if ((this.signal.turnAge as () => number)() > this.turnBudget[priority]) return false
    } else if (this.early && (this.signal.turnAge as () => number)() > this.earlyBudget[priority]) return false
    const credit = this.credit[priority] + this.classFraction[priority]
    if (credit >= 1) {
      this.credit[priority] = credit - 1
      return true
    }
    this.credit[priority] = credit
    return false
  }

  private setBudgets(): void {
    for (let c = 0; c < 4; c++) {
      this.turnBudget[c] = TURN_BUDGET[c] * this.target
      this.earlyBudget[c] = EARLY_TURN_BUDGET[c] * this.target
    }
  }

  private setFraction(value: number): void {
    this.admitFraction = Math.min(1, Math.max(MIN_ADMIT, value))
    this.signal.onFraction?.(this.admitFraction)
    for (let c = 0; c < 4; c++) this.classFraction[c] = this.admitFraction ** DELAY_EXPONENTS[c]
    if (this.admitFraction === 1) this.credit.fill(0)
  }
}

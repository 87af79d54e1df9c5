import { DELAY_EXPONENTS } from './priority'

export interface QueueDelayOptions {
  /** Queueing delay the loop may keep, ms (default 10). */
  target: number
  /** How long the delay must stay above target before shedding starts, ms (default 100). */
  interval: number
}

/** How often the controller re-reads an injected delay, ms of the limiter's clock. */
const CONTROL_STEP = 25
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
 * Sheds for the queue Node hides, the way CoDel does. A synchronous handler finishes within one tick, so requests
 * in flight stay near zero while work piles up in front of the event loop; what grows is the time the loop goes
 * without returning to poll. When that delay has stayed above `target` for `interval`, each new measurement
 * multiplies the admit fraction by sqrt(target / delay), bounded to [0.7, 1.25] per step: the further over target,
 * the more is shed, and the fraction settles where admitted work keeps the delay at target. Below target it
 * recovers the same way. A measurement is used once: with the sampler's signal, a step happens when the sampler has
 * measured the loop again (every 50 ms while it is busy); with an injected delay, every 25 ms of the clock.
 *
 * Admission is deterministic (error diffusion, no random draw): each class accumulates its fraction as credit and
 * is admitted whenever a whole unit is available, so a fraction of 0.25 admits exactly every fourth request.
 */
export class QueueDelayController {
  private readonly target: number
  private readonly interval: number
  private readonly delay: () => number
  private readonly measuredAt: (() => number) | undefined
  private lastMeasuredAt = -1
  private admitFraction = 1
  private readonly classFraction = new Float64Array([1, 1, 1, 1])
  private readonly credit = new Float64Array(4)
  private aboveSince = -1
  private nextStepAt = -Infinity
  private lastDelay = 0
  private lastCutAt = -Infinity

  /** `measuredAt`, when given, tells when `delay` last changed: a step is taken only on a new measurement. */
  constructor(options: QueueDelayOptions, delay: () => number, measuredAt?: () => number) {
    this.target = options.target
    this.interval = options.interval
    this.delay = delay
    this.measuredAt = measuredAt
  }

  /** True while the controller sheds some class (the fast path skips it otherwise). */
  get active(): boolean {
    return this.admitFraction < 1
  }

  get fraction(): number {
    return this.admitFraction
  }

  get measuredDelay(): number {
    return this.lastDelay
  }

  /** Re-reads the delay and adjusts the admit fraction, at most once per control step. */
  update(now: number): void {
    if (now < this.nextStepAt) return
    this.nextStepAt = now + CONTROL_STEP
    if (this.measuredAt !== undefined) {
      const at = this.measuredAt()
      if (at === this.lastMeasuredAt) return
      this.lastMeasuredAt = at
    }
    const d = this.delay()
    this.lastDelay = d
    if (d > this.target) {
      if (this.aboveSince < 0) this.aboveSince = now
      if (now - this.aboveSince < this.interval) return
    } else {
      this.aboveSince = -1
      if (this.admitFraction === 1) return
    }
    const factor = Math.sqrt(this.target / Math.max(d, 1e-3))
    if (factor < 1) {
      // A cut shows in the delay only a measurement later: one cut per interval unless the delay keeps exploding.
      if (now - this.lastCutAt < this.interval && d < 4 * this.target) return
      this.lastCutAt = now
      this.setFraction(this.admitFraction * Math.max(MAX_CUT, factor))
    } else if (now - this.lastCutAt < CAREFUL_AFTER_CUT) {
      this.setFraction(this.admitFraction + CAREFUL_STEP)
    } else {
      this.setFraction(this.admitFraction * Math.min(MAX_RAISE, factor))
    }
  }

  /** Whether a request of class `priority` is admitted under the current fraction. */
  admit(priority: number): boolean {
    const credit = this.credit[priority] + this.classFraction[priority]
    if (credit >= 1) {
      this.credit[priority] = credit - 1
      return true
    }
    this.credit[priority] = credit
    return false
  }

  private setFraction(value: number): void {
    this.admitFraction = Math.min(1, Math.max(MIN_ADMIT, value))
    for (let c = 0; c < 4; c++) this.classFraction[c] = this.admitFraction ** DELAY_EXPONENTS[c]
    if (this.admitFraction === 1) this.credit.fill(0)
  }
}

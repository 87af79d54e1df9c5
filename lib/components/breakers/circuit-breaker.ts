import { BreakerOpenError } from '../../foundation/errors/breaker-open-error'
import {
  type ExecuteOptions,
  type GuardedFunction,
  type Outcome,
  runGuarded,
  startError,
} from '../../admission/run-guarded'
import { type Event, EventSource } from '../../foundation/common/event-source'
import type { LiveRules, RuleStats } from '../../foundation/live-rules/live-rules'
import type { SharedRegion } from '../../foundation/regions/shared-region'
import { BreakerSwitch, forcedOpen, obeysSwitches, resolveSwitches } from '../switches/breaker-switch'
import { type Clock, preciseNow } from '../../foundation/signals/clock'
import type { Breaker, BreakerState } from './breaker'
import {
  type BreakerStateCell,
  CLOSED,
  genOf,
  HALF_OPEN,
  MAX_SWAP_ATTEMPTS,
  OPEN,
  permitsOf,
  phaseOf,
  ProbeHolds,
  stateOf,
} from './breaker-state'
import {
  type CircuitBreakerOptions,
  type CircuitBreakerRule,
  type CircuitBreakerStats,
  type CircuitStateChange,
  type CircuitStrategy,
  resolveCircuitOptions,
} from './circuit-breaker-options'
import { type CircuitThresholds, circuitStats, openCircuitRegion, STATE_NAMES } from './circuit-region'
import type { WindowTally } from './window-tally'
import { registerComponent } from '../../foundation/common/component-registry'

/**
 * A closed / open / half-open circuit breaker. Closed, it counts outcomes in a rolling window and opens when at
 * least `minimumCalls` calls reach the strategy's threshold; open, it refuses calls for `openDuration`; half-open, it lets
 * exactly `halfOpenCalls` probes through (host-wide when shared), closes when they all pass and reopens on the
 * first that fails.
 *
 * The state is one word in a region that only compare-and-swap changes, so a breaker `shared` by every worker of a
 * host opens for all of them at once. An outcome counts as a probe when this instance holds a permit of the current
 * round; other outcomes that arrive while the breaker is not closed belong to calls admitted before it opened and
 * are ignored.
 */
export class CircuitBreaker implements Breaker {
  declare readonly shared: string | undefined
  declare readonly strategy: CircuitStrategy
  /** True for 'slowCallRatio': outcomes are judged by their duration. */
  declare readonly usesDuration: boolean
  /** Fires when this instance sees the state change (a change made by another process is seen on the next call). */
  declare readonly onStateChange: Event<CircuitStateChange>
  private readonly changes = new EventSource<CircuitStateChange>()
  declare private readonly slowOnly: boolean
  declare private readonly thresholds: CircuitThresholds
  declare private readonly rules: LiveRules
  declare private readonly halfOpenCalls: number
  declare private readonly probeTimeout: number
  declare private readonly now: Clock
  /** The outcome of an execute() call whose duration does not matter (every strategy but 'slowCallRatio'). */
  private readonly untimed: Outcome = {
    passed: (value) => {
      this.recordSuccess()
      return value
    },
    failed: (error) => {
      this.recordFailure()
      throw error
    },
  }
  declare private readonly region: SharedRegion
  declare private readonly tally: WindowTally
  declare private readonly cell: BreakerStateCell
  declare private readonly i32: Int32Array
  declare private readonly wordIndex: number
  /** The state word while this instance sees the breaker closed, else -1 (never a word): the hot-path test. */
  private closedWord = -1
  /** A word that refuses calls until blockedUntil (open, or half-open with every permit out), else -1. */
  private blockedWord = -1
  private blockedUntil = 0
  declare private seenPhase: number
  private readonly probes = new ProbeHolds()
  /** @internal The operators' switches this breaker obeys (undefined: none); its BreakerGroup may add its own. */
  declare switch: BreakerSwitch | undefined

  constructor(options?: CircuitBreakerOptions) {
    const o = resolveCircuitOptions(options)
    this.shared = o.w.shared
    const board = resolveSwitches((options as { switches?: unknown } | undefined)?.switches)
    this.switch = board === undefined ? undefined : new BreakerSwitch(board, this.shared)
    obeysSwitches(this)
    this.strategy = o.strategy
    this.slowOnly = o.strategy === 'slowCallRatio'
    this.usesDuration = this.slowOnly
    this.halfOpenCalls = o.halfOpenCalls
    this.probeTimeout = o.probeTimeout
    this.now = o.w.now
    this.onStateChange = this.changes.event
    ;({ region: this.region, tally: this.tally, cell: this.cell, thresholds: this.thresholds } = openCircuitRegion(o))
    this.i32 = this.cell.i32
    this.wordIndex = this.cell.wordIndex
    this.rules = this.thresholds.rules
    const word = this.cell.load()
    this.seenPhase = phaseOf(word)
    if (stateOf(word) === CLOSED) {
      this.closedWord = word
      this.tally.restartFrom(this.cell.floor, this.now())
    }
  }

  /** Told each live rule this member starts to obey, at its first call after the change (docs/rules/live-rules.md). */
  get onRuleChange(): Event<RuleStats> {
    return this.rules.onChange
  }

  /**
   * Changes the thresholds for every member of the host (docs/rules/live-rules.md): the strategy's threshold fields,
   * `minimumCalls`, `openDuration`; validated as the constructor validates them, refused whole (InvalidOptionError)
   * when a field is bad. The window keeps its counts; an open breaker's new openDuration counts from its opening.
   */
  configure(rule: CircuitBreakerRule): RuleStats {
    return this.rules.configure(rule)
  }

  /**
   * Whether to make the call. Never throws, never allocates. An open breaker whose openDuration has passed becomes
   * half-open here (and only here), handing out the probes.
   */
  tryAcquire(): boolean {
    // A plain load of one aligned Int32: the generation in the word means an equal word is the same closed period;
    // a call racing the trip that opens it may still be admitted, as it would be a moment earlier.
    if (this.switch !== undefined) {
      const forced = this.switch.forced()
      if (forced !== undefined) return forced
    }
    const word = this.i32[this.wordIndex]
    if (word === this.closedWord) return true
    const now = this.now()
    const rules = this.rules // a new openDuration may end the wait sooner: decide again when the rule moved
    if (word === this.blockedWord && now < this.blockedUntil && rules.i32[rules.index] === rules.seen)
      return rules.shadow && this.shadowAdmits(word)
    return this.acquireSlow(now)
  }

  /** The permitted call succeeded after `durationMs` (missing: fast). */
  recordSuccess(durationMs?: number): void {
    const bad = this.slowOnly && this.thresholds.isSlow(durationMs) ? 1 : 0
    if (this.i32[this.wordIndex] === this.closedWord) this.count(bad, this.now())
    else this.settle(bad, false)
  }

  /** The permitted call failed after `durationMs` (missing: fast; with 'slowCallRatio' only slow calls are bad). */
  recordFailure(durationMs?: number): void {
    const bad = this.slowOnly ? (this.thresholds.isSlow(durationMs) ? 1 : 0) : 1
    if (this.i32[this.wordIndex] === this.closedWord) this.count(bad, this.now())
    else this.settle(bad, true)
  }

  /**
   * Runs `fn` if permitted and reports its outcome (timed with the precise clock for 'slowCallRatio'); rejects
   * with BreakerOpenError when refused.
   */
  execute<T>(fn: GuardedFunction<T>, options?: ExecuteOptions): Promise<T> {
    const error = startError(fn, options)
    if (error !== undefined) return Promise.reject(error)
    if (!this.tryAcquire())
      return Promise.reject(new BreakerOpenError(this.shared, this.retryAfterMs() / 1000, forcedOpen(this)))
    return runGuarded(fn, options?.signal, this.slowOnly ? this.timed(preciseNow()) : this.untimed)
  }

  /**
   * The state as stored (host-wide when shared). Reading it changes nothing: an open breaker stays 'open' here
   * after openDuration, until a call asks (tryAcquire) and becomes a probe.
   */
  get state(): BreakerState {
    return STATE_NAMES[stateOf(this.cell.load())]
  }

  /** Milliseconds until a refused call could be let through (0 when closed, or when that is now). */
  retryAfterMs(): number {
    const now = this.now()
    const word = this.cell.load()
    const state = stateOf(word)
    if (state === CLOSED) return 0
    const wait =
      (state === OPEN ? this.thresholds.openDuration : this.probeTimeout) - (now - this.cell.since(word, now))
    return wait > 0 ? wait : 0
  }

  stats(): CircuitBreakerStats {
    const now = this.now()
    const word = this.cell.load()
    this.observe(word, now) // a close made by another member restarts this instance's window count
    this.tally.sync(now)
    return circuitStats(word, this.strategy, this.tally, this.cell, this.rules.stats())
  }

  /** Detaches from shared memory (a local breaker just stops counting). Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** The outcome of a call started at `start`, reported with its duration. */
  private timed(start: number): Outcome {
    return {
      passed: (value) => {
        this.recordSuccess(preciseNow() - start)
        return value
      },
      failed: (error) => {
        this.recordFailure(preciseNow() - start)
        throw error
      },
    }
  }

  /** Counts a closed-state outcome and trips the breaker when the threshold is reached. */
  private count(bad: number, now: number): void {
    const rules = this.rules
    if (rules.i32[rules.index] !== rules.seen) rules.refresh()
    const tally = this.tally
    tally.record(bad, now)
    if (this.thresholds.trips(tally.count, tally.sum)) this.trip(now)
  }

  private trip(now: number): void {
    const word = this.cell.load()
    if (stateOf(word) === CLOSED) {
      this.cell.tripEpoch = this.tally.window.epochAt(now)
      this.cell.advance(word, OPEN, now)
    }
    this.observe(this.cell.load(), now)
  }

  private acquireSlow(now: number): boolean {
    this.rules.obey() // openDuration
    for (let attempt = 0; attempt < MAX_SWAP_ATTEMPTS; attempt++) {
      const word = this.cell.load()
      this.observe(word, now)
      const state = stateOf(word)
      if (state === CLOSED) return true
      if (state === HALF_OPEN && permitsOf(word) < this.halfOpenCalls) {
        if (this.cell.takePermit(word)) {
          this.probes.take(genOf(word))
          return true
        }
        continue
      }
      // Open, or half-open with every permit out: after openDuration (or probeTimeout, giving up on probes that
      // never reported) a new half-open round begins; whoever wins the swap, loop and try for a permit.
      const until = this.cell.since(word, now) + (state === OPEN ? this.thresholds.openDuration : this.probeTimeout)
      if (now < until) {
        this.blockedWord = word
        this.blockedUntil = until
        return this.rules.shadow && this.shadowAdmits(word)
      }
      this.cell.advance(word, HALF_OPEN, now)
    }
    this.cell.contentionTimeouts++ // the word kept changing under every swap: refuse, bounded (docs/guide/trust.md)
    return false
  }

  /** A refusal in shadow mode (docs/rules/shadow.md): counted by state, and admitted. Kept off tryAcquire's path. */
  private shadowAdmits(word: number): true {
    this.rules.wouldRefuse(stateOf(word) === OPEN ? 0 : 1)
    return true
  }

  /** An outcome that arrived while this instance did not see the breaker closed. */
  private settle(bad: number, failed: boolean): void {
    const now = this.now()
    const word = this.cell.load()
    this.observe(word, now)
    if (stateOf(word) === CLOSED) {
      this.count(bad, now)
      return
    }
    const gen = genOf(word)
    if (stateOf(word) !== HALF_OPEN || !this.probes.giveBack(gen)) return
    if (failed || bad === 1) this.endRound(gen, OPEN, now)
    else if (this.cell.addPass(gen) >= this.halfOpenCalls) this.endRound(gen, CLOSED, now)
  }

  /** Ends half-open round `gen` by opening again or closing, unless another member ended it first. */
  private endRound(gen: number, to: number, now: number): void {
    this.cell.endRound(gen, to, now, this.tally.window.epochAt(now))
    this.observe(this.cell.load(), now)
  }

  /** Takes note of a transition (made here or by another member) and tells the listeners. */
  private observe(word: number, now: number): void {
    const phase = phaseOf(word)
    if (phase === this.seenPhase) return
    const from = stateOf(this.seenPhase)
    const to = stateOf(word)
    this.seenPhase = phase
    this.closedWord = to === CLOSED ? word : -1
    if (to === CLOSED) this.tally.restartFrom(this.cell.floor, now)
    if (from !== to && this.changes.hasListeners) {
      this.changes.emit({ from: STATE_NAMES[from], to: STATE_NAMES[to], at: now })
    }
  }
}
registerComponent('CircuitBreaker', CircuitBreaker)

import type { RegionLayout } from '../../foundation/regions/region-layout'
import type { SharedRegion } from '../../foundation/regions/shared-region'

export const CLOSED = 0
export const OPEN = 1
export const HALF_OPEN = 2

// The state word, one Int32 that every member changes by compare-and-swap only (never negative):
// bits 0-1 state, bits 2-12 half-open permits issued, bits 13-30 generation (+1 on every transition, so that a
// member acting on a stale word never wins a swap).
const PERMIT_ONE = 1 << 2
const PERMIT_MASK = 0x7ff << 2
const GEN_SHIFT = 13
const GEN_MASK = 0x3ffff
/** Largest halfOpenCalls the word can count. */
export const MAX_HALF_OPEN_CALLS = 1000
/**
 * Compare-and-swap attempts one call makes on the state words before it gives up (docs/guide/trust.md): a swap
 * fails only when another member changed the word, which among honest members ends within a round's permits, so
 * this bound (well under a millisecond) is only ever reached by a word someone keeps rewriting.
 */
export const MAX_SWAP_ATTEMPTS = 2048
// The passes word: bits 0-10 probes that passed, bits 11-28 the generation they belong to.
const PASS_SHIFT = 11
const PASS_MASK = 0x7ff

export const stateOf = (word: number): number => word & 3
export const permitsOf = (word: number): number => (word & PERMIT_MASK) >> 2
export const genOf = (word: number): number => word >>> GEN_SHIFT
/** State and generation without the permit count: what changes on a transition. */
export const phaseOf = (word: number): number => word & ~PERMIT_MASK

export interface BreakerStatePlacement {
  word: number
  passes: number
  sinceGen: number
  since: number
  floor: number
  tripEpoch: number
}

/** Adds the state machine's cells to a breaker's layout. */
export function placeBreakerState(layout: RegionLayout): BreakerStatePlacement {
  return {
    word: layout.cell(0, true),
    passes: layout.cell(0, true),
    sinceGen: layout.cell(0, true),
    since: layout.cell(),
    floor: layout.cell(),
    tripEpoch: layout.cell(),
  }
}

/**
 * A circuit breaker's state machine in a region. Every transition is one compare-and-swap of the state word, so
 * exactly one member wins it and exactly `halfOpenCalls` permits are handed out per half-open round, across threads
 * and processes. The time a state began is stamped next to the word, tagged with the generation it belongs to.
 */
export class BreakerStateCell {
  declare readonly i32: Int32Array
  declare readonly wordIndex: number
  declare private readonly f64: Float64Array
  declare private readonly passesIndex: number
  declare private readonly sinceGenIndex: number
  declare private readonly sinceIndex: number
  declare private readonly floorIndex: number
  declare private readonly tripEpochIndex: number
  /** Calls that gave up after MAX_SWAP_ATTEMPTS (a refused call, or an outcome not counted). */
  contentionTimeouts = 0

  constructor(region: SharedRegion, p: BreakerStatePlacement) {
    this.i32 = region.i32
    this.f64 = region.f64
    this.wordIndex = (region.base + p.word) >> 2
    this.passesIndex = (region.base + p.passes) >> 2
    this.sinceGenIndex = (region.base + p.sinceGen) >> 2
    this.sinceIndex = (region.base + p.since) >> 3
    this.floorIndex = (region.base + p.floor) >> 3
    this.tripEpochIndex = (region.base + p.tripEpoch) >> 3
  }

  load(): number {
    return Atomics.load(this.i32, this.wordIndex)
  }

  /** Moves from `word` to `state` in the next generation. Returns the new word, or -1 if `word` was stale. */
  advance(word: number, state: number, now: number): number {
    const next = (((genOf(word) + 1) & GEN_MASK) << GEN_SHIFT) | state
    if (Atomics.compareExchange(this.i32, this.wordIndex, word, next) !== word) return -1
    this.f64[this.sinceIndex] = now
    Atomics.store(this.i32, this.sinceGenIndex, genOf(next))
    return next
  }

  /** Takes one half-open permit out of `word`; false if the word changed meanwhile. */
  takePermit(word: number): boolean {
    return Atomics.compareExchange(this.i32, this.wordIndex, word, word + PERMIT_ONE) === word
  }

  /** When the state of `word` began. */
  since(word: number, now: number): number {
    const gen = genOf(word)
    const stamped = Atomics.load(this.i32, this.sinceGenIndex)
    if (stamped === gen) return this.f64[this.sinceIndex]
    // A newer transition has been stamped: `word` is stale, and its caller's swap will fail anyway.
    if (((stamped - gen) & GEN_MASK) < GEN_MASK >> 1) return now
    // The winner of the transition has not stamped it yet, or died before it could: stamp it so nothing waits forever.
    this.f64[this.sinceIndex] = now
    Atomics.compareExchange(this.i32, this.sinceGenIndex, stamped, gen)
    return now
  }

  /** Counts one passed probe of half-open round `gen`; returns the round's passes, or -1 if the round is over. */
  addPass(gen: number): number {
    for (let attempt = 0; attempt < MAX_SWAP_ATTEMPTS; attempt++) {
      const word = this.load()
      if (stateOf(word) !== HALF_OPEN || genOf(word) !== gen) return -1
      const seen = Atomics.load(this.i32, this.passesIndex)
      const passes = seen >>> PASS_SHIFT === gen ? (seen & PASS_MASK) + 1 : 1
      if (Atomics.compareExchange(this.i32, this.passesIndex, seen, (gen << PASS_SHIFT) | passes) === seen)
        return passes
    }
    this.contentionTimeouts++
    return -1
  }

  /**
   * Ends half-open round `gen` by moving to `to` (OPEN or CLOSED), unless another member ended it first. Closing
   * sets the window's floor: the bucket of closing (`epoch`), or the next one if the outcomes that tripped the
   * breaker share it. Gives up after MAX_SWAP_ATTEMPTS, counted.
   */
  endRound(gen: number, to: number, now: number, epoch: number): void {
    for (let attempt = 0; ; attempt++) {
      const word = this.load()
      if (stateOf(word) !== HALF_OPEN || genOf(word) !== gen) return
      if (attempt === MAX_SWAP_ATTEMPTS) {
        this.contentionTimeouts++
        return
      }
      if (to === CLOSED) this.floor = epoch > this.tripEpoch ? epoch : epoch + 1
      if (this.advance(word, to, now) >= 0) return
    }
  }

  /** Probes of half-open round `gen` that passed so far. */
  passesOf(gen: number): number {
    const seen = Atomics.load(this.i32, this.passesIndex)
    return seen >>> PASS_SHIFT === gen ? seen & PASS_MASK : 0
  }

  /** The first window epoch counted since the breaker last closed. */
  get floor(): number {
    return this.f64[this.floorIndex]
  }

  set floor(epoch: number) {
    this.f64[this.floorIndex] = epoch
  }

  /** The window epoch in which the breaker last tripped from closed to open. */
  get tripEpoch(): number {
    return this.f64[this.tripEpochIndex]
  }

  set tripEpoch(epoch: number) {
    this.f64[this.tripEpochIndex] = epoch
  }
}

/** The half-open probes this member holds: a probe's outcome counts only in the round it was taken in. */
export class ProbeHolds {
  private gen = -1
  private held = 0

  /** Notes a permit taken in half-open round `gen`. */
  take(gen: number): void {
    if (this.gen !== gen) {
      this.gen = gen
      this.held = 0
    }
    this.held++
  }

  /** Gives back one probe of round `gen`; false when this member holds none of that round. */
  giveBack(gen: number): boolean {
    if (this.held === 0 || this.gen !== gen) return false
    this.held--
    return true
  }
}

import { SharedMemoryError } from '../errors/shared-memory-error'
import { LOCK_TIMED_OUT, SpinLock } from '../regions/spin-lock'
import type { LanePlacement, RegionLayout } from '../regions/region-layout'
import type { SharedRegion } from '../regions/shared-region'

/** Where a rule block lives in a region's payload (docs/rules/live-rules.md). */
export interface RulePlacement {
  /** Payload offset of the writers' lock word (an Int32); the sequence is the Int32 after it. */
  lock: number
  /** Payload offset of the first value (f64), the others following. */
  values: number
  count: number
  /** The component's shadow mode (docs/rules/shadow.md), when it has one: its flag is the block's last value. */
  shadow?: ShadowPlacement
}

/** What a component would have refused in shadow mode: one counter per member and label. */
export interface ShadowPlacement {
  tally: LanePlacement
  /** What each counter counts: the reason (and the priority class, for a limiter that has them). */
  labels: readonly ShadowLabel[]
}

export interface ShadowLabel {
  reason: string
  priority?: string
}

/** The shadow label of a rate limiter: one reason, the rate. */
export const RATE_SHADOW: readonly ShadowLabel[] = [{ reason: 'rate' }]

/** The shadow labels of a breaker: a call it would refuse while open, and while half-open with every probe out. */
export const BREAKER_SHADOW: readonly ShadowLabel[] = [{ reason: 'open' }, { reason: 'half-open' }]

/**
 * Places a rule block: a lock word and a sequence on a cache line of their own, then one f64 per rule value. The
 * values start as `initial` (the creating member's rule), written once when the region is created. A component
 * with shadow mode names what it refuses for (`shadow`): the block gains the flag as its last value (off), and a
 * lane of counters per member.
 */
export function placeRules(
  layout: RegionLayout,
  initial: readonly number[],
  shadow?: readonly ShadowLabel[],
): RulePlacement {
  const lock = layout.cell(0, true)
  const values = shadow === undefined ? initial : [...initial, 0]
  const offsets = values.map((value) => layout.cell(value))
  const placement: RulePlacement = { lock, values: offsets.length > 0 ? offsets[0] : lock, count: values.length }
  if (shadow !== undefined) placement.shadow = { tally: layout.lanes64(shadow.length), labels: shadow }
  return placement
}

/** Reads retried while a writer is under way before giving up until the next look. */
const READ_TRIES = 16

/** The error of a change refused because another member held the lock it needs past the longest wait. */
export function lockBusyError(region: string | undefined): SharedMemoryError {
  const name = region ?? 'a local region'
  return new SharedMemoryError(
    'ERR_BULWARK_REGION_BUSY',
    name,
    `${name}: another member held its lock past the longest wait; nothing was changed (try again)`,
  )
}

/**
 * A versioned block of numbers in a region, read without a lock: a sequence number that is odd while a writer is
 * under way (a seqlock). Writers exclude each other with a spin lock that a dead writer does not keep. The version
 * is half the sequence: 0 until the first write.
 */
export class RuleBlock {
  /** Int32 index of the sequence: a component compares it on its hot path with the one it last applied. */
  readonly sequenceIndex: number
  readonly count: number
  /** The shadow flag's and counters' placement, when the component has shadow mode (the flag is value count-1). */
  readonly shadow: ShadowPlacement | undefined
  /** The region, for the shadow counters' lanes. */
  readonly region: SharedRegion
  private readonly i32: Int32Array
  private readonly f64: Float64Array
  private readonly valuesIndex: number
  private readonly lock: SpinLock

  constructor(region: SharedRegion, placement: RulePlacement) {
    this.region = region
    this.shadow = placement.shadow
    this.i32 = region.i32
    this.f64 = region.f64
    this.sequenceIndex = (region.base + placement.lock + 4) >>> 2
    this.valuesIndex = (region.base + placement.values) / 8
    this.count = placement.count
    this.lock = new SpinLock(region, placement.lock)
  }

  get sequence(): number {
    return Atomics.load(this.i32, this.sequenceIndex)
  }

  /**
   * Copies a consistent set of values into `into` and returns the sequence they belong to, or -1 when writers kept
   * it changing (or a writer died halfway: the next write repairs it).
   */
  read(into: Float64Array): number {
    for (let tries = 0; tries < READ_TRIES; tries++) {
      const before = Atomics.load(this.i32, this.sequenceIndex)
      if ((before & 1) !== 0) continue
      for (let i = 0; i < this.count; i++) into[i] = this.f64[this.valuesIndex + i]
      if (Atomics.load(this.i32, this.sequenceIndex) === before) return before
    }
    return -1
  }

  /**
   * Writes `values` as the next version, host-wide, and returns its sequence; all or nothing. `check` runs first
   * with the block held, before anything changes: what it throws refuses the change (a full table). `whileWriting`
   * runs with the block held, the sequence odd (a component rebasing state the rule's meaning depends on). A lock
   * another member holds past the longest wait (bounded, docs/guide/trust.md) refuses the change with
   * SharedMemoryError ERR_BULWARK_REGION_BUSY.
   */
  write(values: ArrayLike<number>, whileWriting?: () => void, check?: () => void): number {
    if (this.lock.acquire() === LOCK_TIMED_OUT) throw lockBusyError(this.region.name)
    try {
      check?.()
    } catch (error) {
      this.lock.release()
      throw error
    }
    // Odd: a writer died halfway through; this write completes its version.
    const current = Atomics.load(this.i32, this.sequenceIndex)
    const writing = (current & 1) !== 0 ? current : current + 1
    Atomics.store(this.i32, this.sequenceIndex, writing)
    try {
      for (let i = 0; i < this.count; i++) this.f64[this.valuesIndex + i] = values[i]
      whileWriting?.()
    } finally {
      Atomics.store(this.i32, this.sequenceIndex, writing + 1)
      this.lock.release()
    }
    return writing + 1
  }
}

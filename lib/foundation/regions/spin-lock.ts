import type { SharedRegion } from './shared-region'
import { preciseNow } from '../signals/clock'

// The lock word: 0 when free, else (acquisition sequence << 13) | (holder's member + 1). Members are < 4096, so
// the holder fits 13 bits; the 18-bit sequence makes each acquisition a new value, so that a waiter can tell one
// acquisition held for long from a lock taken again and again by the same member.
const HOLDER_BITS = 13
const HOLDER_MASK = (1 << HOLDER_BITS) - 1
const SEQUENCE_MASK = 0x3ffff
// Waiters look at the clock once every this many spins (a clock read costs more than a spin).
const SPINS_PER_LOOK = 1024
// A critical section is a few loads and stores with no call, no allocation and no loop: one that has not ended in
// 2 ms has a preempted, stopped or dead holder. Then ask whether the holder is alive (a system call, so not sooner),
// and again every 100 ms; take over a lock whose holder is dead, or that one word held for a whole second.
const DEAD_CHECK_AFTER_MS = 2
const DEAD_CHECK_EVERY_MS = 100
const STUCK_AFTER_MS = 1000
/**
 * The longest one acquire waits (docs/guide/trust.md): past it the caller denies. A word that keeps changing (a
 * hostile or corrupting writer) must not hold the event loop, so this bound does not restart when the word changes.
 */
export const MAX_LOCK_WAIT_MS = 4

/** What `acquire()` did. */
export const LOCK_TAKEN = 0
/** Taken over from a dead or stuck holder, who may have stopped halfway: repair what can be derived again. */
export const LOCK_TAKEN_OVER = 1
/** Not taken within MAX_LOCK_WAIT_MS: deny, and do not release. */
export const LOCK_TIMED_OUT = -1

/**
 * A spin lock in one Int32 cell of a shared region, for critical sections of a few instructions that update several
 * cells together. A process killed inside the critical section does not deadlock the others: waiters take over a
 * lock whose holder is dead or that was held far longer than any critical section can take. No acquire waits longer
 * than MAX_LOCK_WAIT_MS; after one times out, the next ones look only briefly until one succeeds again, so that a
 * lock word someone keeps rewriting costs the event loop microseconds per call, not milliseconds.
 */
export class SpinLock {
  private readonly i32: Int32Array
  private readonly index: number
  private readonly region: SharedRegion
  private readonly holder: number
  private sequence = 0
  private tag = 0
  // What waiting has seen, kept across acquires so that a holder stuck for a second is noticed by short waits too.
  private observed = 0
  private observedSince = 0
  private lastLook = -Infinity
  private nextDeadCheck = 0
  private cooling = false
  /** Locks this member took over from a dead or stuck holder. */
  takeovers = 0
  /** Acquires that gave up after MAX_LOCK_WAIT_MS (their callers denied). */
  timeouts = 0

  /** `offset`: payload offset of a cell (ideally on its own cache line) that is 0 when the region is created. */
  constructor(region: SharedRegion, offset: number) {
    this.region = region
    this.i32 = region.i32
    this.index = (region.base + offset) >> 2
    this.holder = region.member + 1
  }

  /** Takes the lock: LOCK_TAKEN, LOCK_TAKEN_OVER (repair what you can) or LOCK_TIMED_OUT (deny, no release). */
  acquire(): number {
    this.sequence = (this.sequence + 1) & SEQUENCE_MASK
    const tag = (this.sequence << HOLDER_BITS) | this.holder
    this.tag = tag
    if (Atomics.compareExchange(this.i32, this.index, 0, tag) === 0) {
      this.cooling = false
      return LOCK_TAKEN
    }
    return this.contend(tag)
  }

  /** Releases the lock; false when it had been taken over meanwhile (this member's writes may be stale). */
  release(): boolean {
    return Atomics.compareExchange(this.i32, this.index, this.tag, 0) === this.tag
  }

  private contend(tag: number): number {
    const start = preciseNow() // not performance.now(): its first read loads perf_hooks (1.5-2.5 ms)
    // After a time-out, one look only (no spinning) until the lock is taken again.
    const giveUpAt = this.cooling ? start : start + MAX_LOCK_WAIT_MS
    for (let spins = 0; ; spins++) {
      const word = Atomics.load(this.i32, this.index)
      if (word === 0) {
        if (Atomics.compareExchange(this.i32, this.index, 0, tag) === 0) {
          this.cooling = false
          return LOCK_TAKEN
        }
        continue
      }
      if (spins % SPINS_PER_LOOK !== 0) continue
      const t = spins === 0 ? start : preciseNow()
      if (
        this.look(word, t) &&
        this.overdue(word, t) &&
        Atomics.compareExchange(this.i32, this.index, word, tag) === word
      ) {
        this.takeovers++
        this.cooling = false
        return LOCK_TAKEN_OVER
      }
      if (t >= giveUpAt) {
        this.timeouts++
        this.cooling = true
        return LOCK_TIMED_OUT
      }
    }
  }

  /** Notes the word seen at `t`; true when it is the word seen before (held since `observedSince`). */
  private look(word: number, t: number): boolean {
    const same = word === this.observed && t - this.lastLook < STUCK_AFTER_MS
    this.lastLook = t
    if (same) return true
    this.observed = word
    this.observedSince = t
    this.nextDeadCheck = t + DEAD_CHECK_AFTER_MS
    return false
  }

  /** Whether the holder of `word`, held unchanged since `observedSince`, has lost the lock: dead, or stuck. */
  private overdue(word: number, t: number): boolean {
    if (t - this.observedSince >= STUCK_AFTER_MS) return true
    if (t < this.nextDeadCheck) return false
    this.nextDeadCheck = t + DEAD_CHECK_EVERY_MS
    return !this.holderAlive(word)
  }

  private holderAlive(word: number): boolean {
    const member = (word & HOLDER_MASK) - 1
    for (const m of this.region.members()) if (m.slot === member) return m.alive
    return false // the slot was given back: its holder detached or died
  }
}

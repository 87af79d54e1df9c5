import { performance } from 'perf_hooks'

import type { SharedRegion } from '../shared/shared-region'

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
// and again every 100 ms; take over a lock whose holder is dead, or held for a whole second by a live one.
const DEAD_CHECK_AFTER_MS = 2
const DEAD_CHECK_EVERY_MS = 100
const STUCK_AFTER_MS = 1000

/**
 * A spin lock in one Int32 cell of a shared region, for critical sections of a few instructions that update several
 * cells together. A process killed inside the critical section does not deadlock the others: waiters take over a
 * lock whose holder is dead or that was held far longer than any critical section can take.
 */
export class SpinLock {
  private readonly i32: Int32Array
  private readonly index: number
  private readonly region: SharedRegion
  private readonly holder: number
  private sequence = 0
  private tag = 0
  /** Locks this member took over from a dead or stuck holder. */
  takeovers = 0

  /** `offset`: payload offset of a cell (ideally on its own cache line) that is 0 when the region is created. */
  constructor(region: SharedRegion, offset: number) {
    this.region = region
    this.i32 = region.i32
    this.index = (region.base + offset) >> 2
    this.holder = region.member + 1
  }

  /**
   * Takes the lock. Returns true when it was taken over from a dead or stuck holder, which may have stopped halfway
   * through its critical section: the caller then repairs what it can derive again.
   */
  acquire(): boolean {
    this.sequence = (this.sequence + 1) & SEQUENCE_MASK
    const tag = (this.sequence << HOLDER_BITS) | this.holder
    this.tag = tag
    if (Atomics.compareExchange(this.i32, this.index, 0, tag) === 0) return false
    return this.contend(tag)
  }

  /** Releases the lock; false when it had been taken over meanwhile (this member's writes may be stale). */
  release(): boolean {
    return Atomics.compareExchange(this.i32, this.index, this.tag, 0) === this.tag
  }

  private contend(tag: number): boolean {
    let observed = Atomics.load(this.i32, this.index)
    let since = performance.now()
    let nextDeadCheck = since + DEAD_CHECK_AFTER_MS
    for (let spins = 1; ; spins++) {
      const word = Atomics.load(this.i32, this.index)
      if (word === 0) {
        if (Atomics.compareExchange(this.i32, this.index, 0, tag) === 0) return false
        continue
      }
      if (spins % SPINS_PER_LOOK !== 0) continue
      const t = performance.now()
      if (word !== observed) {
        observed = word
        since = t
        nextDeadCheck = t + DEAD_CHECK_AFTER_MS
        continue
      }
      let takeOver = t - since >= STUCK_AFTER_MS
      if (!takeOver && t >= nextDeadCheck) {
        nextDeadCheck = t + DEAD_CHECK_EVERY_MS
        takeOver = !this.holderAlive(word)
      }
      if (takeOver && Atomics.compareExchange(this.i32, this.index, word, tag) === word) {
        this.takeovers++
        return true
      }
    }
  }

  private holderAlive(word: number): boolean {
    const member = (word & HOLDER_MASK) - 1
    for (const m of this.region.members()) if (m.slot === member) return m.alive
    return false // the slot was given back: its holder detached or died
  }
}

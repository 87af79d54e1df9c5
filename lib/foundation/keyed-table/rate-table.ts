import type { SharedRegion } from '../regions/shared-region'
import { claimMark, type FingerprintFunction, KeyedTable } from './keyed-table'
import { COUNTER, KEYED, type KeyedTablePlacement } from './keyed-table-layout'
import { epochAge, rateDebt, type TickLimit, tickLimit } from './rate-ticks'

const EPOCH = 2 ** KEYED.epochShift
const FRESH = KEYED.freshEpochs
const SKEW = -KEYED.epochSkew
const SLOTS = KEYED.bucketSlots
const RETURNING = KEYED.returning

const ADMIT = 0
const REFUSE = 1
const RELOCATE = 2
const CONTENDED = 3

/**
 * Rate slots: GCRA, one theoretical arrival time per key (docs/rules/keyed-table.md, "Rate slots"), so that a
 * decision is one compare-and-swap of one word. Keys without a slot (the table full of keys in debt, a key over
 * `maxKeyLength`) share the overflow limit, `overflowKeys` keys' worth of the rule.
 */
export class RateTable extends KeyedTable {
  declare private readonly ticksPerMs: number
  declare private readonly overflowTicksPerMs: number
  /** i32 index of the overflow limit's arrival time (its epoch follows). */
  declare private readonly overflow: number
  private limit: TickLimit = { interval: 1, one: 1, tau: 1 }
  private overflowLimit: TickLimit = { interval: 1, one: 1, tau: 1 }
  private burst = 1

  constructor(region: SharedRegion, p: KeyedTablePlacement, maxKeyLength: number, hash?: FingerprintFunction) {
    super(region, p, maxKeyLength, hash)
    this.ticksPerMs = region.f64[(region.base + p.ticks) / 8]
    this.overflowTicksPerMs = region.f64[(region.base + p.overflowTicks) / 8]
    this.overflow = (region.base + p.overflow) >> 2
  }

  /** Whether `rate` and `burst` (and the overflow's `overflowKeys` times them) fit this table's ticks. */
  fits(rate: number, burst: number, overflowKeys: number): boolean {
    const slots = tickLimit(this.ticksPerMs, rate, burst)
    const over = tickLimit(this.overflowTicksPerMs, rate * overflowKeys, burst * overflowKeys)
    return slots.tau <= KEYED.maxTau && over.tau <= KEYED.maxTau && slots.tau >= slots.one
  }

  /** Makes `rate` per second and bursts of `burst` the rule this member decides by (validated by fits()). */
  setRule(rate: number, burst: number, overflowKeys: number): void {
    this.limit = tickLimit(this.ticksPerMs, rate, burst)
    this.overflowLimit = tickLimit(this.overflowTicksPerMs, rate * overflowKeys, burst * overflowKeys)
    this.burst = burst
  }

  /** Takes `n` permits (0 < n <= burst, checked by the caller) for `key` at `nowMs`. Never throws or allocates. */
  acquire(key: string, n: number, nowMs: number): boolean {
    if (key.length > this.maxKeyLength) return this.overflowLong(n, nowMs)
    const ticks = (nowMs - this.origin) * this.ticksPerMs
    const now = ticks | 0
    const epoch = Math.floor(ticks / EPOCH) | 0
    const limit = this.limit
    const inc = n === 1 ? limit.one : Math.max(1, Math.round(n * limit.interval))
    this.locate(key)
    const i = this.find()
    if (this.shared) return this.acquireShared(key, i, now, epoch, inc, n, nowMs)
    if (i < 0) return this.claimLocal(now, epoch, inc, n, nowMs)
    const s = this.i32
    const next = rateDebt(s[i + 2], s[i + 3], now, epoch) + inc
    if (next > limit.tau) return this.refuse(key)
    s[i + 3] = (epoch << 1) | RETURNING
    s[i + 2] = (now + next) | 0
    return true
  }

  /** Milliseconds until `key` could take `n` permits if nobody else takes any. */
  retryAfterMs(key: string, n: number, nowMs: number): number {
    if (key.length > this.maxKeyLength) return this.overflowWait(n, nowMs)
    const ticks = (nowMs - this.origin) * this.ticksPerMs
    const debt = this.debtOf(key, ticks)
    if (debt < 0)
      return this.pickTarget(ticks | 0, Math.floor(ticks / EPOCH) | 0) >= 0 ? 0 : this.overflowWait(n, nowMs)
    const wait = debt + Math.max(1, Math.round(n * this.limit.interval)) - this.limit.tau
    return wait > 0 ? wait / this.ticksPerMs : 0
  }

  /** Permits `key` could take now (a new key: a full burst, or what the overflow has when the table is full). */
  available(key: string, nowMs: number): number {
    const over = (): number => {
      const ticks = (nowMs - this.origin) * this.overflowTicksPerMs
      const debt = this.wordDebt(this.overflow, ticks)
      return Math.min(this.burst, Math.max(0, (this.overflowLimit.tau - debt) / this.overflowLimit.interval))
    }
    if (key.length > this.maxKeyLength) return over()
    const ticks = (nowMs - this.origin) * this.ticksPerMs
    const debt = this.debtOf(key, ticks)
    if (debt < 0) return this.pickTarget(ticks | 0, Math.floor(ticks / EPOCH) | 0) >= 0 ? this.burst : over()
    return Math.min(this.burst, Math.max(0, (this.limit.tau - debt) / this.limit.interval))
  }

  /** Milliseconds until `key`'s bucket is full again: 0 at rest, and 0 for a key holding no slot (never the overflow's). */
  debtMs(key: string, nowMs: number): number {
    if (key.length > this.maxKeyLength) return 0
    const debt = this.debtOf(key, (nowMs - this.origin) * this.ticksPerMs)
    return debt > 0 ? debt / this.ticksPerMs : 0
  }

  /** The located debt of `key` at `ticks`, or -1 when it holds no slot. */
  private debtOf(key: string, ticks: number): number {
    this.locate(key)
    const i = this.find()
    return i < 0 ? -1 : this.wordDebt(i + 2, ticks)
  }

  private wordDebt(state: number, ticks: number): number {
    const s = this.i32
    return rateDebt(Atomics.load(s, state), Atomics.load(s, state + 1), ticks | 0, Math.floor(ticks / EPOCH) | 0)
  }

  private claimLocal(now: number, epoch: number, inc: number, n: number, nowMs: number): boolean {
    const j = this.pickTarget(now, epoch)
    if (j < 0) return this.overflowAcquire(n, nowMs)
    const s = this.i32
    this.count(s[j] === 0 ? COUNTER.created : COUNTER.reused)
    s[j] = this.tag
    s[j + 1] = this.check
    s[j + 3] = epoch << 1
    s[j + 2] = (now + inc) | 0
    return true
  }

  private acquireShared(
    key: string,
    i: number,
    now: number,
    epoch: number,
    inc: number,
    n: number,
    nowMs: number,
  ): boolean {
    for (let round = 0; round < KEYED.rescans; round++) {
      if (round > 0) i = this.find()
      if (i >= 0) {
        const outcome = this.update(i, now, epoch, inc)
        if (outcome === ADMIT) return true
        if (outcome === REFUSE) return this.refuse(key)
        if (outcome === CONTENDED) break
        continue
      }
      // A slot being claimed may be this very key's, by another member: wait for it before claiming another (and
      // refuse, rather than hand out a second budget, if the claimant does not finish).
      if (this.claimed >= 0) {
        if (!this.settleClaim(this.claimed, this.msOf(nowMs))) break
        continue
      }
      const j = this.pickTarget(now, epoch)
      // Looked up again after the pick: a member claiming this key too took a slot before the pick (this one then
      // sees it, claimed or published), or picks the same first empty slot (one claim fails). No second slot.
      if (this.find() >= 0 || this.claimed >= 0) continue
      if (j < 0) return this.overflowAcquire(n, nowMs)
      if (this.claim(j, now, epoch, inc, this.msOf(nowMs))) return true
    }
    this.count(COUNTER.contended)
    return false
  }

  /** One compare-and-swap decision on the located key's slot `i` (docs/rules/keyed-table.md, "Reading a slot"). */
  private update(i: number, now: number, epoch: number, inc: number): number {
    const s = this.i32
    const word = (epoch << 1) | RETURNING
    for (let tries = 0; tries < KEYED.casTries; tries++) {
      const tat = Atomics.load(s, i + 2)
      const written = Atomics.load(s, i + 3)
      // The state read is this key's only if the slot still holds the key afterwards (a claim changes both words).
      if (Atomics.load(s, i) !== this.tag || Atomics.load(s, i + 1) !== this.check) return RELOCATE
      const next = rateDebt(tat, written, now, epoch) + inc
      if (next > this.limit.tau) return REFUSE
      if (written !== word) Atomics.store(s, i + 3, word)
      if (Atomics.compareExchange(s, i + 2, tat, (now + next) | 0) === tat) return ADMIT
    }
    return CONTENDED
  }

  /** Claims slot `j` for the located key with its first request (docs/rules/keyed-table.md, "Claiming a slot"). */
  private claim(j: number, now: number, epoch: number, inc: number, ms: number): boolean {
    const s = this.i32
    const owner = Atomics.load(s, j)
    const claim = claimMark(ms)
    if (owner < 0 || Atomics.compareExchange(s, j, owner, claim) !== owner) return false
    const tat = Atomics.load(s, j + 2)
    const written = Atomics.load(s, j + 3)
    let first = (now + inc) | 0
    if (first === tat) first = (first + 1) | 0
    // The owner spent since the slot was picked (it is not at rest and keeps its slot), or a straggler moved it.
    if (owner > 0 && rateDebt(tat, written, now, epoch) !== 0) return this.giveBack(j, owner, claim)
    Atomics.store(s, j + 3, epoch << 1)
    if (Atomics.compareExchange(s, j + 2, tat, first) !== tat) return this.giveBack(j, owner, claim)
    // Broken meanwhile (this member stalled past claimBreakMs): the slot is not the key's, and what this request
    // wrote there is rewritten by the slot's next claim. Look again; the request is decided where the key is.
    if (Atomics.load(s, j) !== claim) return false
    Atomics.store(s, j + 1, this.check)
    if (Atomics.compareExchange(s, j, claim, this.tag) !== claim) return false
    this.count(owner === 0 ? COUNTER.created : COUNTER.reused)
    return true
  }

  /** The slot back to its owner, unless the claim was broken meanwhile (then it is someone else's to give). */
  private giveBack(j: number, owner: number, claim: number): false {
    Atomics.compareExchange(this.i32, j, claim, owner)
    return false
  }

  /**
   * The i32 index of the slot a new key takes (docs/rules/keyed-table.md, "Who gives a slot up"): an empty one, else
   * the one at rest the longest, a returning key's only after a burst's span at rest; home bucket first.
   */
  private pickTarget(now: number, epoch: number): number {
    const j = this.pickIn(this.home, now, epoch)
    return j >= 0 || this.alt === this.home ? j : this.pickIn(this.alt, now, epoch)
  }

  private pickIn(bucket: number, now: number, epoch: number): number {
    const s = this.i32
    let best = -1
    let bestRest = -1
    for (let n = 0, i = bucket; n < SLOTS; n++, i += 4) {
      const tag = s[i]
      if (tag === 0) return i
      if (tag < 0) continue
      const tat = s[i + 2]
      const written = s[i + 3]
      if (rateDebt(tat, written, now, epoch) !== 0) continue
      const age = epochAge(written, epoch)
      const ahead = (tat - now) | 0
      const rest = age >= FRESH || age < SKEW || ahead > 0 ? Infinity : -ahead
      if ((written & RETURNING) !== 0 && rest < this.limit.tau) continue
      if (rest > bestRest) {
        best = i
        bestRest = rest
      }
    }
    return best
  }

  private overflowLong(n: number, nowMs: number): boolean {
    this.count(COUNTER.longKeys)
    return this.overflowAcquire(n, nowMs)
  }

  /** A decision on the overflow limit, which every key without a slot shares. */
  private overflowAcquire(n: number, nowMs: number): boolean {
    const ticks = (nowMs - this.origin) * this.overflowTicksPerMs
    const now = ticks | 0
    const epoch = Math.floor(ticks / EPOCH) | 0
    const limit = this.overflowLimit
    const inc = n === 1 ? limit.one : Math.max(1, Math.round(n * limit.interval))
    const s = this.i32
    const i = this.overflow
    for (let tries = 0; tries < KEYED.casTries; tries++) {
      const tat = Atomics.load(s, i)
      const written = Atomics.load(s, i + 1)
      const next = rateDebt(tat, written, now, epoch) + inc
      if (next > limit.tau) {
        this.count(COUNTER.overflowRefused)
        return false
      }
      if (written !== ((epoch << 1) | RETURNING)) Atomics.store(s, i + 1, (epoch << 1) | RETURNING)
      if (Atomics.compareExchange(s, i, tat, (now + next) | 0) === tat) {
        this.count(COUNTER.overflowAdmitted)
        return true
      }
    }
    this.count(COUNTER.contended)
    return false
  }

  private overflowWait(n: number, nowMs: number): number {
    const ticks = (nowMs - this.origin) * this.overflowTicksPerMs
    const limit = this.overflowLimit
    const wait = this.wordDebt(this.overflow, ticks) + Math.max(1, Math.round(n * limit.interval)) - limit.tau
    return wait > 0 ? wait / this.overflowTicksPerMs : 0
  }
}

/**
 * Admitted requests of one limiter instance, as tokens that carry a generation: releasing a token twice, releasing
 * a shed token or a made-up number is recognised and ignored instead of corrupting the in-flight count.
 * A token is `generation * SLOTS + slot`. Storage grows by doubling (the only allocation, amortised) up to SLOTS.
 *
 * Each slot is two doubles, its generation and its request's start: the generation is odd while the slot is out
 * (a token always carries an odd one) and moves on at every acquire and release, so one comparison tells a live
 * token from any stale or invented one. Two arrays in all, for the hot path's few memory accesses.
 *
 * Tokens stay below 2^30, V8's small-integer range: a token returned by a call V8 did not inline is then not boxed
 * into a heap number (16 bytes of garbage per request once a slot had been reused ~512 times, when generations ran
 * to 2^32). The price, docs/rules/bbr.md "Tokens": generations wrap at GENERATIONS, so a token released again exactly
 * a multiple of GENERATIONS / 2 reuses of its slot later is taken for the slot's current one.
 */
const SLOTS = 1 << 16
/** Exact (a power of two): token * PER_SLOTS splits a token without a floating-point modulo, which V8 calls out for. */
const PER_SLOTS = 1 / SLOTS
/** Generations wrap here (even, so a wrap keeps the parity): SLOTS * GENERATIONS is 2^30. */
const GENERATIONS = 1 << 14
const INITIAL = 1024

export const NOT_SAMPLED = -1
export const INVALID = -2

export class TokenTable {
  /** Per slot: generation at 2 * slot, start at 2 * slot + 1. */
  declare private cells: Float64Array
  declare private free: Int32Array
  declare private freeCount: number
  declare private capacity: number

  /** `initial` slots to begin with (a power of two; components kept per key start small). */
  constructor(initial = INITIAL) {
    this.cells = new Float64Array(initial * 2)
    this.free = new Int32Array(initial)
    this.freeCount = initial
    this.capacity = initial
    for (let i = 0; i < initial; i++) this.free[i] = initial - 1 - i
  }

  /** A token for an admitted request started at `start` (or NOT_SAMPLED), or -1 when the table is full. */
  acquire(start: number): number {
    if (this.freeCount === 0 && !this.grow()) return -1
    const slot = this.free[--this.freeCount]
    const cells = this.cells
    const at = 2 * slot
    const generation = cells[at] + 1
    cells[at] = generation
    cells[at + 1] = start
    return generation * SLOTS + slot
  }

  /**
   * The start recorded for `token` (NOT_SAMPLED if none), or INVALID if the token is not outstanding. Short (V8
   * inlines it into its callers within a budget of bytecode): -2 is INVALID.
   */
  release(token: number): number {
    // typeof first: comparing a Symbol throws, and a BigInt would not survive the arithmetic below. Anything else
    // that is not an outstanding token fails one of the tests: `>>> 0` is the floor for every token handed out
    // (generations stay below GENERATIONS) and for anything else gives a slot that is not an integer, a negative one
    // or one beyond the table, or a generation no cell holds (or no cell: undefined).
    if (typeof token !== 'number') return -2
    const generation = (token * PER_SLOTS) >>> 0
    const slot = token - generation * SLOTS
    const cells = this.cells
    const at = 2 * slot
    // Equal and odd: the slot is out under this very token (a free slot's generation is even).
    if ((slot | 0) !== slot || cells[at] !== generation || (generation & 1) !== 1) return -2
    // Generations wrap at GENERATIONS (even), which keeps every token below 2^30.
    cells[at] = (generation + 1) & (GENERATIONS - 1)
    this.free[this.freeCount++] = slot
    return cells[at + 1]
  }

  /** The slot of a token this table handed out. */
  slotOf(token: number): number {
    return token - Math.floor(token * PER_SLOTS) * SLOTS
  }

  /** The token slot `slot` holds now (valid while it is outstanding). */
  tokenAt(slot: number): number {
    return this.cells[2 * slot] * SLOTS + slot
  }

  /** Outstanding tokens of this instance. */
  get outstanding(): number {
    return (this.capacity === SLOTS ? SLOTS - 1 : this.capacity) - this.freeCount
  }

  private grow(): boolean {
    if (this.capacity >= SLOTS) return false
    const next = this.capacity * 2
    const cells = new Float64Array(next * 2)
    cells.set(this.cells)
    const free = new Int32Array(next)
    // The last slot is never handed out: its last token would be 2^30 - 1, the inbound guard's BYPASS.
    const top = next === SLOTS ? next - 1 : next
    for (let i = 0; i < top - this.capacity; i++) free[i] = top - 1 - i
    this.freeCount = top - this.capacity
    this.cells = cells
    this.free = free
    this.capacity = next
    return true
  }
}

/**
 * Admitted requests of one limiter instance, as tokens that carry a generation: releasing a token twice, releasing
 * a shed token or a made-up number is recognised and ignored instead of corrupting the in-flight count.
 * A token is `generation * SLOTS + slot`. Storage grows by doubling (the only allocation, amortised) up to SLOTS.
 */
const SLOTS = 1 << 20
const INITIAL = 1024

export const NOT_SAMPLED = -1
export const INVALID = -2

export class TokenTable {
  private starts: Float64Array
  private generations: Uint32Array
  private busy: Uint8Array
  private free: Int32Array
  private freeCount: number
  private capacity: number

  /** `initial` slots to begin with (a power of two; components kept per key start small). */
  constructor(initial = INITIAL) {
    this.starts = new Float64Array(initial)
    this.generations = new Uint32Array(initial)
    this.busy = new Uint8Array(initial)
    this.free = new Int32Array(initial)
    this.freeCount = initial
    this.capacity = initial
    for (let i = 0; i < initial; i++) this.free[i] = initial - 1 - i
  }

  /** A token for an admitted request started at `start` (or NOT_SAMPLED), or -1 when the table is full. */
  acquire(start: number): number {
    if (this.freeCount === 0 && !this.grow()) return -1
    const slot = this.free[--this.freeCount]
    this.busy[slot] = 1
    this.starts[slot] = start
    return this.generations[slot] * SLOTS + slot
  }

  /** The start recorded for `token` (NOT_SAMPLED if none), or INVALID if the token is not outstanding. */
  release(token: number): number {
    // typeof first: comparing a Symbol throws, and a BigInt passes the range test but not the arithmetic below.
    if (typeof token !== 'number' || !(token >= 0) || token > Number.MAX_SAFE_INTEGER) return INVALID
    const slot = token % SLOTS
    if ((slot | 0) !== slot || slot >= this.capacity || this.busy[slot] === 0) return INVALID
    if ((token - slot) / SLOTS !== this.generations[slot]) return INVALID
    this.busy[slot] = 0
    this.generations[slot] = this.generations[slot] + 1 // wraps at 2^32 by the Uint32Array store
    this.free[this.freeCount++] = slot
    return this.starts[slot]
  }

  /** Outstanding tokens of this instance. */
  get outstanding(): number {
    return this.capacity - this.freeCount
  }

  private grow(): boolean {
    if (this.capacity >= SLOTS) return false
    const next = this.capacity * 2
    const starts = new Float64Array(next)
    starts.set(this.starts)
    const generations = new Uint32Array(next)
    generations.set(this.generations)
    const busy = new Uint8Array(next)
    busy.set(this.busy)
    const free = new Int32Array(next)
    for (let i = 0; i < next - this.capacity; i++) free[i] = next - 1 - i
    this.freeCount = next - this.capacity
    this.starts = starts
    this.generations = generations
    this.busy = busy
    this.free = free
    this.capacity = next
    return true
  }
}

/**
 * A binary min-heap of (deadline, id) pairs in one Float64Array: 16 bytes a waiter, no object per entry. Entries
 * of waiters served or cancelled stay until they reach the top (the owner tells live ids from dead ones), and the
 * heap is rebuilt from the live ones when the dead outnumber them.
 */
export class DeadlineHeap {
  private data = new Float64Array(32)
  private count = 0

  get size(): number {
    return this.count
  }

  /** The soonest deadline (Infinity when empty). */
  get soonest(): number {
    return this.count === 0 ? Infinity : this.data[0]
  }

  /** The id of the soonest deadline (call only when size > 0). */
  get soonestId(): number {
    return this.data[1]
  }

  push(deadline: number, id: number): void {
    if (2 * this.count + 2 > this.data.length) {
      const grown = new Float64Array(this.data.length * 2)
      grown.set(this.data)
      this.data = grown
    }
    const d = this.data
    let i = this.count++
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (d[2 * parent] <= deadline) break
      d[2 * i] = d[2 * parent]
      d[2 * i + 1] = d[2 * parent + 1]
      i = parent
    }
    d[2 * i] = deadline
    d[2 * i + 1] = id
  }

  pop(): void {
    const d = this.data
    const last = --this.count
    if (last === 0) return
    const deadline = d[2 * last]
    const id = d[2 * last + 1]
    let i = 0
    for (;;) {
      let child = 2 * i + 1
      if (child >= last) break
      if (child + 1 < last && d[2 * child + 2] < d[2 * child]) child++
      if (d[2 * child] >= deadline) break
      d[2 * i] = d[2 * child]
      d[2 * i + 1] = d[2 * child + 1]
      i = child
    }
    d[2 * i] = deadline
    d[2 * i + 1] = id
  }

  /** Keeps only the entries whose id `live` accepts, and shrinks the storage to fit them. */
  rebuild(live: (id: number) => boolean): void {
    const old = this.data
    const n = this.count
    this.data = new Float64Array(Math.max(32, 2 ** Math.ceil(Math.log2(Math.max(1, n) * 2))))
    this.count = 0
    for (let i = 0; i < n; i++) if (live(old[2 * i + 1])) this.push(old[2 * i], old[2 * i + 1])
  }

  clear(): void {
    this.count = 0
    if (this.data.length > 32) this.data = new Float64Array(32)
  }
}

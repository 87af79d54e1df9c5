/** A waiter's settle function: its promise's resolve (a rejection is resolved with a rejecting thenable). */
export type Settle = (value?: unknown) => void

/** Priority classes: critical, high, normal, low. A waiter's id is its sequence in its class times 4, plus the class. */
export const CLASSES = 4

/**
 * The waiters of a PermitQueue, per priority class, oldest first: parallel arrays of settle functions and permit
 * counts (negative for a reserve), with a head index per class. A waiter that leaves early (a timeout, an abort)
 * leaves a hole until the head passes it; the served head is cut off once it is most of the array.
 */
export class WaiterLists {
  live = 0
  private readonly settles: Array<Array<Settle | undefined>> = [[], [], [], []]
  private readonly amounts: number[][] = [[], [], [], []]
  private readonly heads = [0, 0, 0, 0]
  /** The class sequence number of index 0 of each class's arrays. */
  private readonly bases = [0, 0, 0, 0]

  /** The list a new waiter of class p pushes its settle function to (inside its promise's executor). */
  list(p: number): Array<Settle | undefined> {
    return this.settles[p]
  }

  /** Adds the permits of the waiter whose settle was just pushed to class p; returns its id. */
  added(p: number, amount: number): number {
    this.amounts[p].push(amount)
    this.live++
    return (this.bases[p] + this.settles[p].length - 1) * CLASSES + p
  }

  /** The highest class with a live waiter (skipping the gone ones at each head); call with live > 0. */
  firstClass(): number {
    for (let c = 0; c < CLASSES; c++) {
      const list = this.settles[c]
      let head = this.heads[c]
      while (head < list.length && list[head] === undefined) head++
      this.heads[c] = head
      if (head < list.length) return c
      if (list.length > 0) this.reset(c)
    }
    return CLASSES - 1
  }

  /** The head of class c's permit count (negative for a reserve); after firstClass() returned c. */
  headAmount(c: number): number {
    return this.amounts[c][this.heads[c]]
  }

  headId(c: number): number {
    return (this.bases[c] + this.heads[c]) * CLASSES + c
  }

  isLive(id: number): boolean {
    const c = id % CLASSES
    const i = (id - c) / CLASSES - this.bases[c]
    return i >= this.heads[c] && i < this.settles[c].length && this.settles[c][i] !== undefined
  }

  /** Removes a live waiter and returns its settle function. */
  remove(id: number): Settle {
    const c = id % CLASSES
    const i = (id - c) / CLASSES - this.bases[c]
    const settle = this.settles[c][i] as Settle
    this.settles[c][i] = undefined
    this.live--
    if (i === this.heads[c]) {
      this.heads[c] = i + 1
      if (i > 1024 && 2 * i > this.settles[c].length) this.compact(c)
    }
    return settle
  }

  /** Removes every waiter, calling `each` with each live one's settle function. */
  clear(each: (settle: Settle) => void): void {
    for (let c = 0; c < CLASSES; c++) {
      const list = this.settles[c]
      for (let i = this.heads[c]; i < list.length; i++) {
        const settle = list[i]
        if (settle !== undefined) each(settle)
      }
      this.reset(c)
    }
    this.live = 0
  }

  /** Empties class c's arrays (every entry in them is served or gone), moving its base past them. */
  reset(c: number): void {
    const list = this.settles[c]
    if (list.length === 0) return
    this.bases[c] += list.length
    list.length = 0
    this.amounts[c].length = 0
    this.heads[c] = 0
  }

  /** Drops class c's served head from its arrays (the ids of the waiters after it stay valid through `bases`). */
  private compact(c: number): void {
    const head = this.heads[c]
    this.settles[c].splice(0, head)
    this.amounts[c].splice(0, head)
    this.bases[c] += head
    this.heads[c] = 0
  }
}

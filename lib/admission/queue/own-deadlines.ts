import type { QueueEntry } from './queue-entry'

/**
 * The admission queue's waiters whose own deadline (a request's deadline less its service time) comes before their
 * maxWait: how many wait, and the soonest of their deadlines. The queue's usual expiry reads only the head of each
 * class (the oldest waiter reaches maxWait first); these waiters may sit anywhere, so they are scanned for, and only
 * when the soonest of them is due.
 */
export class OwnDeadlines {
  private count = 0
  private soonest = Infinity

  /** The soonest own deadline of a live waiter (Infinity when none has one). */
  get next(): number {
    return this.count > 0 ? this.soonest : Infinity
  }

  /** Counts a new waiter (those that are not `early` are ignored). */
  added(entry: QueueEntry): void {
    if (!entry.early) return
    this.count++
    if (entry.until < this.soonest) this.soonest = entry.until
  }

  /** Uncounts a waiter that stopped waiting (admitted, abandoned or timed out at maxWait). */
  removed(entry: QueueEntry): void {
    if (entry.early) this.count--
  }

  /** Forgets every waiter (the queue closed). */
  clear(): void {
    this.count = 0
    this.soonest = Infinity
  }

  /**
   * Calls `shed` for each live waiter (done set) of `classes` (from `heads`) whose own deadline has come by `now`,
   * when the soonest one is due; the others set the next soonest.
   */
  expire(now: number, classes: QueueEntry[][], heads: Int32Array, shed: (entry: QueueEntry) => void): void {
    if (this.count === 0 || now < this.soonest) return
    let soonest = Infinity
    for (let p = 0; p < classes.length; p++) {
      const list = classes[p]
      for (let i = heads[p]; i < list.length; i++) {
        const entry = list[i]
        if (entry.done === undefined || !entry.early) continue
        if (now < entry.until) {
          if (entry.until < soonest) soonest = entry.until
          continue
        }
        this.count--
        shed(entry)
      }
    }
    this.soonest = soonest
  }
}

import { performance } from 'perf_hooks'

/** Something that must be settled by a deadline (performance.now() ms). */
export interface Deadlined {
  readonly deadline: number
  readonly settled: boolean
  /** Settles it the fallback way; called once, only if not settled by then. */
  expire(): void
}

/**
 * Expires pending calls without a timer per call. Every call gets the same timeout, so deadlines arrive in the
 * order calls are pushed: a FIFO, checked by one timer that ticks every `tick` ms while anything is pending.
 * A call pushed with deadline `start + timeout - tick` is expired within `timeout` of its start (timer lag aside).
 */
export class DeadlineQueue<T extends Deadlined> {
  readonly tick: number
  private items: Array<T | undefined> = []
  private head = 0
  private timer: NodeJS.Timeout | undefined

  constructor(tick: number) {
    this.tick = tick
  }

  push(item: T): void {
    this.items.push(item)
    if (this.timer === undefined) this.arm()
  }

  /**
   * Drops settled calls from the front. Replies mostly come back in the order calls went out (one connection
   * answers in order), so calling this after each settle keeps the queue short and lets settled calls die young.
   */
  trim(): void {
    const items = this.items
    while (this.head < items.length && (items[this.head] as T).settled) items[this.head++] = undefined
    if (this.head === items.length) {
      items.length = 0
      this.head = 0
    }
  }

  get pending(): number {
    return this.items.length - this.head
  }

  /** Expires everything still pending (on close). */
  expireAll(): void {
    this.check(Infinity)
  }

  private arm(): void {
    this.timer = setTimeout(this.onTick, this.tick)
    this.timer.unref?.()
  }

  private readonly onTick = (): void => {
    this.timer = undefined
    this.check(performance.now())
    if (this.head < this.items.length) this.arm()
  }

  private check(now: number): void {
    const items = this.items
    while (this.head < items.length) {
      const item = items[this.head] as T
      if (!item.settled && item.deadline > now) break
      items[this.head++] = undefined
      if (!item.settled) item.expire()
    }
    // Drop the consumed front now and then, not on every tick.
    if (this.head > 1024 && this.head * 2 > items.length) {
      this.items = items.slice(this.head)
      this.head = 0
    }
    if (this.head === this.items.length) {
      this.items.length = 0
      this.head = 0
    }
  }
}

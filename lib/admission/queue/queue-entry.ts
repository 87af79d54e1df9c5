/** A request waiting in the queue. `cancel()` frees its place: true if it was still waiting. */
export interface Waiter {
  cancel(): boolean
}

/** What an entry asks of its queue when its caller goes away. */
export interface EntryOwner {
  abandon(entry: QueueEntry): boolean
}

/** One waiter of the admission queue: its class, key, arrival and deadline, and what to call once it is decided. */
export class QueueEntry implements Waiter {
  /** Whether its own deadline or its latency's bound comes before its maxWait (OwnDeadlines counts it). */
  readonly early: boolean

  constructor(
    readonly queue: EntryOwner,
    readonly p: number,
    readonly key: string | undefined,
    readonly at: number,
    maxWait: number,
    /**
     * When it stops waiting: at + maxWait, or sooner for a request with its own deadline or a latency bound (the
     * limiter's clock).
     */
    readonly until: number,
    /** Called once with the token or Shed code; undefined once decided or cancelled. */
    public done: ((token: number) => void) | undefined,
    /** The Shed code it gets at an early `until`: Shed.deadline (its own deadline) or Shed.queueTimeout. */
    readonly shedAs: number,
  ) {
    this.early = until < at + maxWait
  }

  cancel(): boolean {
    return this.queue.abandon(this)
  }
}

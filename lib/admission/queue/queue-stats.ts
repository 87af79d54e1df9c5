/** What an admission queue reports (docs/rules/queue.md). */
export interface AdmissionQueueStats {
  /** Requests waiting now (this process's queue). */
  length: number
  maxQueue: number
  maxWait: number
  /** Whether the queue is under pressure now: its oldest waiter is older than the target, newest served first. */
  lifo: boolean
  /** Requests that waited (were refused at once and queued). */
  queued: number
  /** Queued requests later admitted. */
  admitted: number
  /**
   * Queued requests shed before a slot came: with Shed.queueTimeout (they waited maxWait, or the limiter closed) or
   * Shed.deadline (their own deadline would pass before they could be served).
   */
  timedOut: number
  /** Queued requests whose caller went away before a slot came (their place freed). */
  abandoned: number
  /** Requests refused at once because the queue was full (shed with the limiter's own reason). */
  full: number
}

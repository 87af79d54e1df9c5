import { BulkheadRejectedError } from '../../foundation/errors/bulkhead-rejected-error'
import type { RetryBudget } from '../../components/resilience/retry-budget'
import { fullJitterDelay } from '../../components/resilience/backoff'
import type { Breaker } from '../../components/breakers/breaker'
import { OverloadError } from '../../foundation/errors/overload-error'
import { breakerOpenError, callStart, report } from './breaker-port'
import type { BulkheadSlots } from './bulkhead-port'
import { remainingDeadlineMs } from '../inbound/deadline-context'
import { withHeader } from '../inbound/request-headers'
import type { CallQuota } from './origin-quotas'

/** The next dispatch of an undici interceptor chain; the handler is one of the two handler APIs. */
export type Dispatch = (options: any, handler: any) => boolean

/** What every request of one guard shares. */
export interface GuardPolicy {
  attempts: number
  baseDelay: number
  maxDelay: number
  random: () => number
  budget: RetryBudget | undefined
  isFailure: (statusCode: number) => boolean
  /** The header that passes the inbound request's remaining milliseconds on (undefined: none is sent). */
  deadlineHeader: string | undefined
}

function retryLater(request: GuardedRequest): void {
  request.retry()
}

/**
 * One request through the guard, whatever undici's handler API: the origin's breaker is asked before each attempt
 * and told how it went (a failing status or an error before the response counts as a failure, unless the caller
 * aborted). A failed attempt of a replayable request is retried after full-jitter backoff while attempts and the
 * retry budget allow; its response is read to the end and dropped (so the connection stays usable), and the
 * caller sees only the last attempt. The caller's abort stays valid across attempts.
 *
 * Subclasses speak one handler API on both sides (docs/guide/integrations.md, "undici handler APIs"): they receive an
 * attempt's events, ask this class what to do with each, and pass on to the caller what it lets through.
 */
export abstract class GuardedRequest {
  private attempt = 0
  private startedAt = 0
  private reported = false
  private started = false
  private forwarded = false
  /** The current attempt failed and will be retried: its response goes nowhere. */
  protected discarding = false
  /** The caller aborted the request. */
  protected aborted = false
  protected abortReason: unknown = undefined
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  /** The current attempt's bulkhead token (-1: none held). */
  private slot = -1
  /** The current attempt was answered with a status that is not a failure: its time says how the origin is. */
  private answered = false
  /** The inbound request's deadline (Date.now() ms) when the caller runs inside one (deadline.propagate), else NaN. */
  private readonly deadline: number
  /** The call's part of its origin's quota, when the origin has one: told the answer, handed to the caller. */
  quota: CallQuota | undefined = undefined

  constructor(
    private readonly policy: GuardPolicy,
    private readonly dispatch: Dispatch,
    private readonly options: unknown,
    private readonly breaker: Breaker,
    private readonly name: string,
    private readonly replayable: boolean,
    private readonly bulkhead: BulkheadSlots | undefined,
  ) {
    const remaining = policy.deadlineHeader === undefined ? undefined : remainingDeadlineMs()
    this.deadline = remaining === undefined ? NaN : Date.now() + remaining
  }

  /** Gives the caller an error that ends the request. */
  protected abstract fail(error: unknown): void

  /** Aborts the attempt in flight (a no-op once it is over). */
  protected abstract abortAttempt(reason: unknown): void

  /**
   * Starts the next attempt, or fails the request at once with BreakerOpenError if the breaker refuses it, or with
   * BulkheadRejectedError if the origin's bulkhead is full (the origin is saturated).
   */
  run(): boolean {
    const deadline = this.deadline
    let options = this.options
    if (deadline === deadline) {
      const left = Math.floor(deadline - Date.now())
      if (left <= 0) {
        // The inbound caller has given up: no attempt goes out (and no breaker counts one).
        this.fail(new OverloadError('deadline'))
        return true
      }
      options = withHeader(options, this.policy.deadlineHeader as string, String(left))
    }
    if (!this.breaker.tryAcquire()) {
      this.fail(breakerOpenError(this.breaker, this.name))
      return true
    }
    if (this.bulkhead !== undefined) {
      const slot = this.bulkhead.tryAcquire()
      if (slot < 0) {
        this.fail(new BulkheadRejectedError(this.name))
        return true
      }
      this.slot = slot
      this.answered = false
    }
    this.startedAt = callStart(this.breaker)
    this.reported = false
    this.discarding = false
    try {
      return this.dispatch(options, this)
    } catch (error) {
      // The attempt never started (a dispatcher that does not speak the caller's handler API throws): its bulkhead
      // slot goes back, or every such request would leave one taken for good.
      this.attemptOver(false)
      throw error
    }
  }

  /** Ends the request before any attempt (its origin's quota refused it, or the caller left while it waited). */
  refuse(error: unknown): void {
    this.fail(error)
  }

  /** The context the caller's handler gets: undici's, with the call's quota Reservation when there is one. */
  protected callerContext(context: unknown): unknown {
    const reservation = this.quota?.reservation
    if (reservation === undefined) return context
    return context !== null && typeof context === 'object' ? { ...context, reservation } : { reservation }
  }

  /** Called by the backoff timer. */
  retry(): void {
    this.timer = undefined
    if (this.aborted) return
    try {
      this.run()
    } catch (error) {
      // A dispatcher that throws (one that does not speak the caller's handler API, say) fails the request: from a
      // timer, a throw would be an uncaught exception, and swallowing it would leave the caller waiting forever.
      this.fail(error)
    }
  }

  /** An attempt is connected: true when the caller is to hear of it (the first attempt only). */
  protected attemptStarted(): boolean {
    if (this.aborted) {
      this.abortAttempt(this.abortReason)
      return false
    }
    if (this.started) return false
    this.started = true
    return true
  }

  /** A response status arrived: false when the response is to be dropped (a failed attempt that will be retried). */
  protected responseStarted(statusCode: number, headers?: unknown): boolean {
    if (statusCode < 200) return true // informational: passed on as it is
    this.quota?.answered(statusCode, headers)
    const failed = this.policy.isFailure(statusCode)
    this.answered = !failed
    this.reportOnce(!failed)
    if (failed && this.mayRetry()) {
      this.discarding = true
      return false
    }
    this.forwarded = true
    return true
  }

  /** The attempt's response ended: false when it was dropped and the next attempt is scheduled. */
  protected responseEnded(): boolean {
    this.attemptOver(this.answered)
    if (!this.discarding) return true
    this.backOff()
    return false
  }

  /** The attempt failed with an error: true when the caller is to get it, false when a retry is scheduled. */
  protected attemptFailed(): boolean {
    this.attemptOver(false)
    if (this.forwarded || this.aborted) return true
    if (this.discarding) {
      this.backOff() // the retry was granted when the failing status arrived
      return false
    }
    this.reportOnce(false)
    if (!this.mayRetry()) return true
    this.backOff()
    return false
  }

  /** The connection was upgraded: the origin answered. */
  protected upgraded(): void {
    this.attemptOver(true)
    this.reportOnce(true)
    this.forwarded = true
  }

  /** The caller's abort: valid whichever attempt is in flight, and between attempts. */
  protected readonly abortByCaller = (reason?: unknown): void => {
    if (this.aborted) return
    this.aborted = true
    this.abortReason = reason
    if (this.timer === undefined) return this.abortAttempt(reason)
    // Between attempts: nothing is in flight to abort, so the request ends here.
    clearTimeout(this.timer)
    this.timer = undefined
    this.fail(reason ?? new Error('the request was aborted'))
  }

  /** Gives the attempt's bulkhead slot back (once), its time counted when the origin answered it. */
  private attemptOver(measured: boolean): void {
    if (this.slot < 0) return
    const slot = this.slot
    this.slot = -1
    ;(this.bulkhead as BulkheadSlots).release(slot, measured)
  }

  private reportOnce(ok: boolean): void {
    if (this.reported) return
    this.reported = true
    report(this.breaker, ok, this.startedAt)
  }

  private mayRetry(): boolean {
    const p = this.policy
    // A retry after the inbound caller's deadline would be answered to nobody.
    if (this.deadline === this.deadline && this.deadline <= Date.now()) return false
    return this.replayable && this.attempt + 1 < p.attempts && (p.budget === undefined || p.budget.tryAcquire())
  }

  private backOff(): void {
    const p = this.policy
    const delay = fullJitterDelay(this.attempt, p.baseDelay, p.maxDelay, p.random)
    this.attempt++
    this.discarding = false
    this.timer = setTimeout(retryLater, delay, this)
  }
}

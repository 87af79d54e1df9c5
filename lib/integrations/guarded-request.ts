import { BreakerOpenError } from '../errors/breaker-open-error'
import type { RetryBudget } from '../resilience/retry-budget'
import { fullJitterDelay } from '../resilience/backoff'
import { callStart, type GuardBreaker, permit, report } from './breaker-port'

/** An undici (v6) dispatch handler: the methods a guarded request forwards. */
export interface DispatchHandler {
  onConnect?(abort: (reason?: unknown) => void, context?: unknown): void
  onError?(error: unknown): void
  onUpgrade?(statusCode: number, headers: unknown, socket: unknown): void
  onResponseStarted?(): void
  onHeaders?(statusCode: number, headers: unknown, resume: () => void, statusText: string): boolean
  onData?(chunk: Buffer): boolean
  onComplete?(trailers: unknown): void
  onBodySent?(chunk: unknown): void
  onRequestSent?(): void
}

export type Dispatch = (options: any, handler: DispatchHandler) => boolean

/** What every request of one guard shares. */
export interface GuardPolicy {
  attempts: number
  baseDelay: number
  maxDelay: number
  random: () => number
  budget: RetryBudget | undefined
  isFailure: (statusCode: number) => boolean
}

function retryLater(request: GuardedRequest): void {
  request.retry()
}

/**
 * One request through the guard: the origin's breaker is asked before each attempt and told how it went (a
 * failing status or an error before the response counts as a failure, unless the caller aborted). A failed
 * attempt of a replayable request is retried after full-jitter backoff while attempts and the retry budget
 * allow; its response is read to the end and dropped (so the connection stays usable), and the caller sees only
 * the last attempt. The caller's abort function stays valid across attempts.
 */
export class GuardedRequest implements DispatchHandler {
  private attempt = 0
  private startedAt = 0
  private reported = false
  private connected = false
  private forwarded = false
  private discarding = false
  private aborted = false
  private abortReason: unknown = undefined
  private abortAttempt: ((reason?: unknown) => void) | undefined = undefined
  private timer: ReturnType<typeof setTimeout> | undefined = undefined

  constructor(
    private readonly policy: GuardPolicy,
    private readonly dispatch: Dispatch,
    private readonly options: unknown,
    private readonly handler: DispatchHandler,
    private readonly breaker: GuardBreaker,
    private readonly name: string,
    private readonly replayable: boolean,
  ) {}

  /** Starts the next attempt, or fails the request with BreakerOpenError if the breaker refuses it. */
  run(): boolean {
    if (!permit(this.breaker)) {
      this.handler.onError?.(new BreakerOpenError(this.breaker.shared ?? this.name))
      return true
    }
    this.startedAt = callStart(this.breaker)
    this.reported = false
    this.discarding = false
    return this.dispatch(this.options, this)
  }

  /** Called by the backoff timer. */
  retry(): void {
    this.timer = undefined
    if (!this.aborted) this.run()
  }

  onConnect(abort: (reason?: unknown) => void, context?: unknown): void {
    this.abortAttempt = abort
    if (this.aborted) return abort(this.abortReason)
    if (this.connected) return
    this.connected = true
    this.handler.onConnect?.(this.abortByCaller, context)
  }

  onHeaders(statusCode: number, headers: unknown, resume: () => void, statusText: string): boolean {
    if (statusCode >= 200) {
      const failed = this.policy.isFailure(statusCode)
      this.reportOnce(!failed)
      if (failed && this.mayRetry()) {
        this.discarding = true
        return true
      }
      this.forwarded = true
    }
    return this.handler.onHeaders?.(statusCode, headers, resume, statusText) ?? true
  }

  onData(chunk: Buffer): boolean {
    if (this.discarding) return true
    return this.handler.onData?.(chunk) ?? true
  }

  onComplete(trailers: unknown): void {
    if (this.discarding) return this.backOff()
    this.handler.onComplete?.(trailers)
  }

  onError(error: unknown): void {
    if (this.forwarded || this.aborted) return this.handler.onError?.(error)
    if (this.discarding) return this.backOff() // the retry was granted when the failing status arrived
    this.reportOnce(false)
    if (this.mayRetry()) return this.backOff()
    this.handler.onError?.(error)
  }

  onUpgrade(statusCode: number, headers: unknown, socket: unknown): void {
    this.reportOnce(true)
    this.forwarded = true
    this.handler.onUpgrade?.(statusCode, headers, socket)
  }

  onResponseStarted(): void {
    this.handler.onResponseStarted?.()
  }

  onBodySent(chunk: unknown): void {
    this.handler.onBodySent?.(chunk)
  }

  onRequestSent(): void {
    this.handler.onRequestSent?.()
  }

  private readonly abortByCaller = (reason?: unknown): void => {
    if (this.aborted) return
    this.aborted = true
    this.abortReason = reason
    if (this.timer === undefined) return this.abortAttempt?.(reason)
    // Between attempts: nothing is in flight to abort, so the request ends here.
    clearTimeout(this.timer)
    this.timer = undefined
    this.handler.onError?.(reason ?? new Error('the request was aborted'))
  }

  private reportOnce(ok: boolean): void {
    if (this.reported) return
    this.reported = true
    report(this.breaker, ok, this.startedAt)
  }

  private mayRetry(): boolean {
    const p = this.policy
    return this.replayable && this.attempt + 1 < p.attempts && (p.budget === undefined || p.budget.canRetry())
  }

  private backOff(): void {
    const p = this.policy
    const delay = fullJitterDelay(this.attempt, p.baseDelay, p.maxDelay, p.random)
    this.attempt++
    this.discarding = false
    this.timer = setTimeout(retryLater, delay, this)
  }
}

import type { Hedger } from '../../components/resilience/hedger'
import { preciseNow } from '../../foundation/signals/clock'
import type { CallbackHandler } from './callback-guarded-request'
import type { ControllerHandler, DispatchController } from './controller-guarded-request'
import type { Dispatch } from './guarded-request'

/**
 * One attempt of a guarded request sent as up to two (docs/guide/integrations.md, "Hedging"): the first goes out
 * at once, the second when the first has had no response for the hedger's delay and its budget allows. The first
 * to get a response wins: its events go to the request, the other is aborted. The request sees one attempt: it is
 * started once (by the first attempt to connect) and its abort aborts both. An attempt that fails before any
 * response ends the request only when no other attempt is left.
 */
export function hedgedDispatch(dispatch: Dispatch, hedger: Hedger): Dispatch {
  return (options, handler) => {
    const call = new HedgedCall(dispatch, options, handler, hedger)
    return call.start()
  }
}

interface Attempt {
  abort: (reason?: unknown) => void
  failed: boolean
  startedAt: number
}

class HedgedCall {
  private readonly controllerApi: boolean
  private readonly attempts: Attempt[] = []
  private winner: Attempt | undefined = undefined
  private started = false
  private over = false
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private lastError: unknown = undefined

  constructor(
    private readonly dispatch: Dispatch,
    private readonly options: unknown,
    private readonly downstream: CallbackHandler | ControllerHandler,
    private readonly hedger: Hedger,
  ) {
    this.controllerApi = typeof (downstream as ControllerHandler).onRequestStart === 'function'
  }

  start(): boolean {
    const delay = this.hedger.delayMs()
    if (delay < Infinity) this.timer = setTimeout(this.hedge, delay)
    return this.send()
  }

  private readonly hedge = (): void => {
    this.timer = undefined
    if (this.winner !== undefined || this.over || !this.hedger.tryHedge()) return
    try {
      this.send()
    } catch {
      // the first attempt goes on alone
    }
  }

  private send(): boolean {
    const attempt: Attempt = { abort: () => undefined, failed: false, startedAt: preciseNow() }
    this.attempts.push(attempt)
    return this.dispatch(this.options, this.controllerApi ? this.controllerFor(attempt) : this.callbackFor(attempt))
  }

  private readonly abortAll = (reason?: unknown): void => {
    for (const a of this.attempts) a.abort(reason)
  }

  private connected(attempt: Attempt, context: unknown): void {
    if (this.started) return
    this.started = true
    const d = this.downstream
    if (this.controllerApi) (d as ControllerHandler).onRequestStart(new AllController(this.abortAll), context)
    else (d as CallbackHandler).onConnect(this.abortAll, context)
    void attempt
  }

  /** A response arrived on `attempt`: true when it is the winner's (its events go down). */
  private responded(attempt: Attempt): boolean {
    if (this.winner === undefined) {
      this.winner = attempt
      if (this.timer !== undefined) clearTimeout(this.timer)
      this.hedger.answered(preciseNow() - attempt.startedAt, attempt !== this.attempts[0])
      for (const other of this.attempts) if (other !== attempt) other.abort(new Error('hedged: answered elsewhere'))
    }
    return this.winner === attempt
  }

  /** An attempt failed: true when its error ends the request. */
  private failed(attempt: Attempt, error: unknown): boolean {
    if (this.winner !== undefined) return this.winner === attempt
    attempt.failed = true
    this.lastError = error
    // Wait for a hedge in flight; a first attempt failing before the hedge ends the request (retries are the guard's).
    if (this.attempts.some((a) => !a.failed)) return false
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.over = true
    return true
  }

  private callbackFor(attempt: Attempt): CallbackHandler {
    const d = this.downstream as CallbackHandler
    return {
      onConnect: (abort, context) => {
        attempt.abort = abort
        this.connected(attempt, context)
      },
      onHeaders: (statusCode, headers, resume, statusText) =>
        this.responded(attempt) ? (d.onHeaders?.(statusCode, headers, resume, statusText) ?? true) : true,
      onData: (chunk) => (this.winner === attempt ? (d.onData?.(chunk) ?? true) : true),
      onComplete: (trailers) => {
        if (this.winner === attempt) d.onComplete?.(trailers)
      },
      onError: (error) => {
        if (this.failed(attempt, error)) d.onError(this.winner === attempt ? error : this.lastError)
      },
    }
  }

  private controllerFor(attempt: Attempt): ControllerHandler {
    const d = this.downstream as ControllerHandler
    const all = new AllController(this.abortAll)
    return {
      onRequestStart: (controller, context) => {
        attempt.abort = (reason) => controller.abort(reason)
        this.connected(attempt, context)
      },
      onResponseStart: (_c, statusCode, headers, statusText) => {
        if (this.responded(attempt)) d.onResponseStart?.(all, statusCode, headers, statusText)
      },
      onResponseData: (_c, chunk) => {
        if (this.winner === attempt) d.onResponseData?.(all, chunk)
      },
      onResponseEnd: (_c, trailers) => {
        if (this.winner === attempt) d.onResponseEnd?.(all, trailers)
      },
      onResponseError: (_c, error) => {
        if (this.failed(attempt, error)) d.onResponseError(all, this.winner === attempt ? error : this.lastError)
      },
    }
  }
}

/** The controller the request holds while hedged: abort aborts every attempt. */
class AllController implements DispatchController {
  aborted = false
  readonly paused = false
  reason: unknown = null
  constructor(private readonly abortAll: (reason?: unknown) => void) {}
  abort(reason?: unknown): void {
    this.aborted = true
    this.reason = reason
    this.abortAll(reason)
  }
  pause(): void {}
  resume(): void {}
}

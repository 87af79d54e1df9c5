import { GuardedRequest } from './guarded-request'

/** What undici's controller handler API hands a handler: one per attempt, from the dispatcher. */
export interface DispatchController {
  abort(reason?: unknown): void
  pause(): void
  resume(): void
  readonly aborted: boolean
  readonly paused: boolean
  readonly reason: unknown
  rawHeaders?: unknown
  rawTrailers?: unknown
}

/** undici's controller handler API (undici 7 and 8; Node 26's fetch): the methods a guarded request forwards. */
export interface ControllerHandler {
  onRequestStart(controller: DispatchController, context?: unknown): void
  onResponseError(controller: DispatchController, error: unknown): void
  onRequestUpgrade?(controller: DispatchController, statusCode: number, headers: unknown, socket: unknown): void
  onResponseStarted?(): void
  onResponseStart?(controller: DispatchController, statusCode: number, headers: unknown, statusText: string): void
  onResponseData?(controller: DispatchController, chunk: Buffer): void
  onResponseEnd?(controller: DispatchController, trailers: unknown): void
  onBodySent?(chunk: unknown): void
  onRequestSent?(): void
}

/**
 * The controller the caller holds for the whole request: abort works whichever attempt is in flight (and between
 * attempts); pause and resume act on the attempt whose response the caller is reading.
 */
class CallerController implements DispatchController {
  rawHeaders: unknown = null
  rawTrailers: unknown = null
  private pausedByCaller = false
  private abortedByCaller = false
  private abortReason: unknown = null

  constructor(private readonly request: ControllerGuardedRequest) {}

  abort(reason?: unknown): void {
    if (this.abortedByCaller) return
    this.abortedByCaller = true
    this.abortReason = reason
    this.request.abortBy(reason)
  }

  pause(): void {
    this.pausedByCaller = true
    this.request.current?.pause()
  }

  resume(): void {
    if (!this.pausedByCaller) return
    this.pausedByCaller = false
    this.request.current?.resume()
  }

  get aborted(): boolean {
    return this.abortedByCaller || (this.request.current?.aborted ?? false)
  }

  get paused(): boolean {
    return this.pausedByCaller
  }

  get reason(): unknown {
    return this.abortedByCaller ? this.abortReason : (this.request.current?.reason ?? null)
  }
}

/** A guarded request between a caller and a dispatcher that both speak the controller API. */
export class ControllerGuardedRequest extends GuardedRequest implements ControllerHandler {
  /** The attempt in flight's controller. */
  current: DispatchController | undefined = undefined
  private readonly caller = new CallerController(this)

  constructor(
    private readonly handler: ControllerHandler,
    ...request: ConstructorParameters<typeof GuardedRequest>
  ) {
    super(...request)
  }

  abortBy(reason?: unknown): void {
    this.abortByCaller(reason)
  }

  protected fail(error: unknown): void {
    this.handler.onResponseError(this.caller, error)
  }

  protected abortAttempt(reason: unknown): void {
    this.current?.abort(reason)
  }

  onRequestStart(controller: DispatchController, context?: unknown): void {
    this.current = controller
    if (this.attemptStarted()) this.handler.onRequestStart(this.caller, this.callerContext(context))
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: unknown, statusText: string): void {
    if (!this.responseStarted(statusCode, headers)) return
    this.caller.rawHeaders = controller.rawHeaders
    this.handler.onResponseStart?.(this.caller, statusCode, headers, statusText)
  }

  onResponseData(_controller: DispatchController, chunk: Buffer): void {
    if (!this.discarding) this.handler.onResponseData?.(this.caller, chunk)
  }

  onResponseEnd(controller: DispatchController, trailers: unknown): void {
    if (!this.responseEnded()) return
    this.caller.rawTrailers = controller.rawTrailers
    this.handler.onResponseEnd?.(this.caller, trailers)
  }

  onResponseError(_controller: DispatchController, error: unknown): void {
    if (this.attemptFailed()) this.handler.onResponseError(this.caller, error)
  }

  onRequestUpgrade(controller: DispatchController, statusCode: number, headers: unknown, socket: unknown): void {
    this.upgraded()
    this.caller.rawHeaders = controller.rawHeaders
    this.handler.onRequestUpgrade?.(this.caller, statusCode, headers, socket)
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
}

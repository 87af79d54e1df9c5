import { GuardedRequest } from './guarded-request'

/** undici's callback handler API (undici 6 and 7; Node 18-24's fetch): the methods a guarded request forwards. */
export interface CallbackHandler {
  onConnect(abort: (reason?: unknown) => void, context?: unknown): void
  onError(error: unknown): void
  onUpgrade?(statusCode: number, headers: unknown, socket: unknown): void
  onResponseStarted?(): void
  onHeaders?(statusCode: number, headers: unknown, resume: () => void, statusText: string): boolean
  onData?(chunk: Buffer): boolean
  onComplete?(trailers: unknown): void
  onBodySent?(chunk: unknown): void
  onRequestSent?(): void
}

/** A guarded request between a caller and a dispatcher that both speak the callback API. */
export class CallbackGuardedRequest extends GuardedRequest implements CallbackHandler {
  private abortCurrent: ((reason?: unknown) => void) | undefined = undefined

  constructor(
    private readonly handler: CallbackHandler,
    ...request: ConstructorParameters<typeof GuardedRequest>
  ) {
    super(...request)
  }

  protected fail(error: unknown): void {
    this.handler.onError(error)
  }

  protected abortAttempt(reason: unknown): void {
    this.abortCurrent?.(reason)
  }

  onConnect(abort: (reason?: unknown) => void, context?: unknown): void {
    this.abortCurrent = abort
    if (this.attemptStarted()) this.handler.onConnect(this.abortByCaller, this.callerContext(context))
  }

  onHeaders(statusCode: number, headers: unknown, resume: () => void, statusText: string): boolean {
    if (!this.responseStarted(statusCode, headers)) return true
    return this.handler.onHeaders?.(statusCode, headers, resume, statusText) ?? true
  }

  onData(chunk: Buffer): boolean {
    if (this.discarding) return true
    return this.handler.onData?.(chunk) ?? true
  }

  onComplete(trailers: unknown): void {
    if (this.responseEnded()) this.handler.onComplete?.(trailers)
  }

  onError(error: unknown): void {
    if (this.attemptFailed()) this.handler.onError(error)
  }

  onUpgrade(statusCode: number, headers: unknown, socket: unknown): void {
    this.upgraded()
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
}

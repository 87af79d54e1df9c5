import type { CallbackHandler } from './callback-guarded-request'
import type { ControllerHandler, DispatchController } from './controller-guarded-request'

/** The most response bytes a coalesced call keeps for callers that join after its body started (default 1 MiB). */
export const MAX_COALESCED_BODY = 1 << 20

/** A response event, recorded to be played to callers that join late. */
type Played = [kind: 'start' | 'headers' | 'data' | 'end' | 'error', a?: unknown, b?: unknown, c?: unknown]

/** One caller of a coalesced call, whichever handler API it speaks. */
abstract class Subscriber {
  detached = false
  constructor(readonly call: CoalescedCall) {}
  abstract play(event: Played): void
  /** The caller's abort: it leaves the call; the upstream call is aborted only when nobody is left. */
  readonly leave = (reason?: unknown): void => {
    if (this.detached) return
    this.detached = true
    this.call.left(this, reason)
  }
}

class CallbackSubscriber extends Subscriber {
  constructor(
    call: CoalescedCall,
    private readonly handler: CallbackHandler,
  ) {
    super(call)
  }
  play([kind, a, b, c]: Played): void {
    const h = this.handler
    if (kind === 'start') h.onConnect(this.leave, a)
    else if (kind === 'headers') h.onHeaders?.(a as number, b, noop, c as string)
    else if (kind === 'data') h.onData?.(a as Buffer)
    else if (kind === 'end') h.onComplete?.(a)
    else h.onError(a)
  }
}

/** The controller a controller-API caller holds: abort leaves the call; pause and resume do nothing. */
class SubscriberController implements DispatchController {
  readonly paused = false
  readonly reason = null
  constructor(private readonly subscriber: Subscriber) {}
  abort(reason?: unknown): void {
    this.subscriber.leave(reason)
  }
  pause(): void {}
  resume(): void {}
  get aborted(): boolean {
    return this.subscriber.detached
  }
}

class ControllerSubscriber extends Subscriber {
  private readonly controller = new SubscriberController(this)
  constructor(
    call: CoalescedCall,
    private readonly handler: ControllerHandler,
  ) {
    super(call)
  }
  play([kind, a, b, c]: Played): void {
    const h = this.handler
    const ctl = this.controller
    if (kind === 'start') h.onRequestStart(ctl, a)
    else if (kind === 'headers') h.onResponseStart?.(ctl, a as number, b, c as string)
    else if (kind === 'data') h.onResponseData?.(ctl, a as Buffer)
    else if (kind === 'end') h.onResponseEnd?.(ctl, a)
    else h.onResponseError(ctl, a)
  }
}

function noop(): void {}

const LEFT = new Error('every caller of the coalesced request left')

/**
 * One upstream call shared by concurrent identical requests (docs/guide/integrations.md, "Coalescing"): the first
 * caller's request goes out with this call's handler, and every event it gets is played to each caller, the ones
 * that join later first getting what they missed (up to MAX_COALESCED_BODY bytes of body; past it no one joins).
 * A caller's abort takes it out; the upstream call is aborted when no caller is left. Speaks the API of the first
 * caller's handler: only callers of that API join.
 */
export class CoalescedCall {
  /** The handler the guarded request sends its events to (of the first caller's API). */
  readonly handler: CallbackHandler | ControllerHandler
  readonly controllerApi: boolean
  private readonly subscribers: Subscriber[] = []
  private readonly played: Played[] = []
  private bytes = 0
  private abortUpstream: ((reason?: unknown) => void) | undefined = undefined
  private ended = false
  private open = true

  constructor(
    first: unknown,
    private readonly done: () => void,
    private readonly maxBody = MAX_COALESCED_BODY,
  ) {
    this.controllerApi = typeof (first as ControllerHandler).onRequestStart === 'function'
    this.handler = this.controllerApi ? this.controllerHandler() : this.callbackHandler()
    this.join(first)
  }

  /** Adds a caller (its handler); false when it cannot join (another API, or too late). */
  join(handler: unknown): boolean {
    const controller = typeof (handler as ControllerHandler).onRequestStart === 'function'
    if (!this.open || controller !== this.controllerApi) return false
    const s = controller
      ? new ControllerSubscriber(this, handler as ControllerHandler)
      : new CallbackSubscriber(this, handler as CallbackHandler)
    this.subscribers.push(s)
    for (const event of this.played) if (!s.detached) s.play(event)
    return true
  }

  /** @internal */
  left(s: Subscriber, reason: unknown): void {
    const i = this.subscribers.indexOf(s)
    if (i >= 0) this.subscribers.splice(i, 1)
    s.play(['error', reason ?? new Error('the request was aborted')])
    if (this.subscribers.length === 0 && !this.ended) {
      this.close()
      this.abortUpstream?.(reason)
    }
  }

  private emit(event: Played): void {
    if (this.open) {
      if (event[0] === 'data') this.bytes += (event[1] as Buffer).length
      if (this.bytes > this.maxBody) this.close()
      else this.played.push(event)
    }
    if (event[0] === 'end' || event[0] === 'error') {
      this.ended = true
      this.close()
    }
    for (const s of this.subscribers.slice()) if (!s.detached) s.play(event)
  }

  private close(): void {
    if (!this.open) return
    this.open = false
    this.played.length = 0
    this.done()
  }

  private callbackHandler(): CallbackHandler {
    return {
      onConnect: (abort, context) => {
        this.abortUpstream = abort
        if (this.subscribers.length === 0) return abort(LEFT) // every caller left while it waited to start
        this.emit(['start', context])
      },
      onHeaders: (statusCode, headers, _resume, statusText) => {
        this.emit(['headers', statusCode, headers, statusText])
        return true
      },
      onData: (chunk) => {
        this.emit(['data', chunk])
        return true
      },
      onComplete: (trailers) => this.emit(['end', trailers]),
      onError: (error) => this.emit(['error', error]),
    }
  }

  private controllerHandler(): ControllerHandler {
    return {
      onRequestStart: (controller, context) => {
        this.abortUpstream = (reason) => controller.abort(reason)
        if (this.subscribers.length === 0) return controller.abort(LEFT)
        this.emit(['start', context])
      },
      onResponseStart: (_c, statusCode, headers, statusText) => this.emit(['headers', statusCode, headers, statusText]),
      onResponseData: (_c, chunk) => this.emit(['data', chunk]),
      onResponseEnd: (_c, trailers) => this.emit(['end', trailers]),
      onResponseError: (_c, error) => this.emit(['error', error]),
    }
  }
}

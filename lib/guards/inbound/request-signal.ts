import { AsyncLocalStorage } from 'async_hooks'

/**
 * The AbortSignal a guarded handler reads to stop its work (docs/guide/degrade.md, "Stopping the handler's work"):
 * aborted with a `TimeoutError` DOMException when the guard answers in the handler's place (its `timeout`), and with
 * an `AbortError` when the client goes away before the response is complete. The controller is made on first read:
 * a handler that never reads the signal costs no AbortController.
 */
export class RequestSignal {
  private controller: AbortController | undefined = undefined
  private reason: unknown = undefined
  private readonly native: (() => AbortSignal | undefined) | undefined

  /** `native`: the framework's own signal for the same request, whose aborts this one follows. */
  constructor(native?: () => AbortSignal | undefined) {
    this.native = native
  }

  get signal(): AbortSignal {
    let controller = this.controller
    if (controller === undefined) {
      controller = this.controller = new AbortController()
      if (this.reason !== undefined) controller.abort(this.reason)
      else this.follow(this.native?.())
    }
    return controller.signal
  }

  /** The guard answered in the handler's place after `ms`. */
  timedOut(ms: number): void {
    this.abort(new DOMException(`the guard answered in the handler's place after ${ms} ms`, 'TimeoutError'))
  }

  /** The client went away before the response was complete. */
  clientGone(): void {
    this.abort(new DOMException('the client went away', 'AbortError'))
  }

  private follow(native: AbortSignal | undefined): void {
    if (native === undefined || native === null) return
    if (native.aborted) this.abort(native.reason)
    else native.addEventListener('abort', () => this.abort(native.reason), { once: true })
  }

  private abort(reason: unknown): void {
    if (this.reason !== undefined) return
    this.reason = reason
    this.controller?.abort(reason)
  }
}

/** The getter of `property` along `target`'s prototype chain (a framework's own signal), if any. */
function inheritedGetter(target: object, property: string): (() => AbortSignal | undefined) | undefined {
  for (let o = Object.getPrototypeOf(target); o !== null; o = Object.getPrototypeOf(o)) {
    const d = Object.getOwnPropertyDescriptor(o, property)
    if (d !== undefined) return typeof d.get === 'function' ? (d.get as () => AbortSignal) : undefined
  }
  return undefined
}

/**
 * Gives `target` (the request object the handler receives) a `signal` of the guard's. A framework's own signal on
 * the same object (Fastify's `request.signal`, Node 26's `IncomingMessage.signal`) is followed: it still aborts it.
 */
export function attachSignal(target: object, property = 'signal'): RequestSignal {
  const getter = inheritedGetter(target, property)
  const s = new RequestSignal(getter === undefined ? undefined : () => getter.call(target))
  Object.defineProperty(target, property, { configurable: true, enumerable: false, get: () => s.signal })
  return s
}

// The signal of the gRPC call whose handler is running (grpc-js gives a handler no signal of its own). Made on first
// use: an application without a gRPC guard `timeout` never creates it.
let store: AsyncLocalStorage<RequestSignal> | undefined

/** Runs `fn(...args)` with `signal` as the current call's. */
export function runWithSignal<A extends unknown[], R>(signal: RequestSignal, fn: (...args: A) => R, ...args: A): R {
  store ??= new AsyncLocalStorage<RequestSignal>()
  return store.run(signal, fn, ...args)
}

/**
 * The AbortSignal of the gRPC call whose handler is running, under a `grpcServerGuard` with a `timeout`: aborted
 * when the guard answers in the handler's place or the client cancels (docs/guide/degrade.md). Undefined elsewhere.
 */
export function callSignal(): AbortSignal | undefined {
  return store?.getStore()?.signal
}

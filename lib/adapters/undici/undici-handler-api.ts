import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { type CallbackHandler, CallbackGuardedRequest } from '../../guards/outbound/callback-guarded-request'
import { type ControllerHandler, ControllerGuardedRequest } from '../../guards/outbound/controller-guarded-request'
import type { GuardedRequest } from '../../guards/outbound/guarded-request'

/** A handler of either undici handler API, as an undici interceptor receives it. */
export type DispatchHandler = CallbackHandler | ControllerHandler

// The methods undici itself requires of a handler in each API (the response ones, or the upgrade one for upgrades).
const CONTROLLER = {
  base: ['onRequestStart', 'onResponseError'],
  response: ['onResponseStart', 'onResponseData', 'onResponseEnd'],
  upgrade: ['onRequestUpgrade'],
}
const CALLBACK = {
  base: ['onConnect', 'onError'],
  response: ['onHeaders', 'onData', 'onComplete'],
  upgrade: ['onUpgrade'],
}

const EXPECTED =
  'an undici dispatch handler: onRequestStart, onResponseStart, onResponseData, onResponseEnd and onResponseError ' +
  '(undici 7 and 8, the fetch of Node 26), or onConnect, onHeaders, onData, onComplete and onError (undici 6 and 7, ' +
  'the fetch of Node 20 to 24); for an upgrade, onRequestUpgrade or onUpgrade in place of the response methods'

function speaks(handler: Record<string, unknown>, api: typeof CALLBACK, upgrade: boolean): boolean {
  const has = (name: string): boolean => typeof handler[name] === 'function'
  return api.base.every(has) && (upgrade ? api.upgrade : api.response).every(has)
}

/**
 * The guarded request for `handler`, speaking its handler API to the next dispatcher too: the guard translates
 * nothing, so a caller and a dispatcher of different APIs fail as they would without it, with undici's own error.
 * A handler of neither API is refused here, synchronously, rather than waiting for calls that would never come.
 */
export function guardedRequest(
  handler: unknown,
  options: { method?: unknown; upgrade?: unknown },
  ...request: ConstructorParameters<typeof GuardedRequest>
): GuardedRequest {
  if (handler !== null && typeof handler === 'object') {
    const h = handler as Record<string, unknown>
    const upgrade = Boolean(options.upgrade) || options.method === 'CONNECT'
    if (typeof h.onRequestStart === 'function') {
      if (speaks(h, CONTROLLER, upgrade)) return new ControllerGuardedRequest(handler as ControllerHandler, ...request)
    } else if (speaks(h, CALLBACK, upgrade)) {
      return new CallbackGuardedRequest(handler as CallbackHandler, ...request)
    }
  }
  throw new InvalidArgumentError('handler', handler, `${EXPECTED}; it has ${methodsOf(handler)}`)
}

function methodsOf(handler: unknown): string {
  if (handler === null || typeof handler !== 'object') return 'no methods'
  const names: string[] = []
  for (let o: object | null = handler; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (/^on[A-Z]/.test(name) && typeof (handler as Record<string, unknown>)[name] === 'function') names.push(name)
    }
  }
  return names.length === 0 ? 'no on* methods' : names.join(', ')
}

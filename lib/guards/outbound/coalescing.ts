import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { CoalescedCall } from './coalesced-call'

/** The guards' `coalesce` option: true for the default key, or a function of the request giving its key. */
export type CoalesceChoice<Request> = boolean | ((request: Request) => string | undefined)

/** The most keys coalesced at once: past it, requests go on their own. */
export const MAX_COALESCED_KEYS = 10_000

/**
 * The guard's coalescing step, or undefined without one: given a request and its handler, true when it joined a
 * call in flight (nothing to send), the handler to send it with when it starts a shared call, or false.
 */
export function coalescing<Request>(
  value: unknown,
  defaultKey: (request: Request) => string | undefined,
): ((request: Request, handler: unknown) => unknown) | undefined {
  if (value === undefined || value === false) return undefined
  if (value !== true && typeof value !== 'function') {
    throw new InvalidOptionError('coalesce', value, 'a boolean, or a function giving a request its key')
  }
  const keyOf = value === true ? defaultKey : (value as (request: Request) => string | undefined)
  const flights = new Map<string, CoalescedCall>()
  return (request, handler) => {
    const h = handler as { onRequestStart?: unknown; onConnect?: unknown } | null
    if (h === null || (typeof h.onRequestStart !== 'function' && typeof h.onConnect !== 'function')) return false
    const key = keyOf(request)
    if (typeof key !== 'string') return false
    const flight = flights.get(key)
    if (flight !== undefined && flight.join(handler)) return true
    if (flights.size >= MAX_COALESCED_KEYS) return false
    const call: CoalescedCall = new CoalescedCall(handler, () => {
      if (flights.get(key) === call) flights.delete(key)
    })
    flights.set(key, call)
    return call.handler
  }
}

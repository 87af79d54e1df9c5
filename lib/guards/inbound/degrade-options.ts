import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import {
  checkFunction,
  checkNumber,
  checkOptions,
  optionalBoolean,
  optionalFunction,
} from '../../foundation/common/validate'
import type { Fallback } from './fallback'

/**
 * Where a request's deadline comes from (docs/guide/degrade.md, "Deadlines"). Over HTTP: a header the application
 * names, holding the milliseconds the caller will still wait (as Envoy's `x-envoy-expected-rq-timeout-ms`), read
 * only for requests `trust` accepts. Over gRPC: the call's own deadline (`grpc-timeout`), read by default.
 */
export interface DeadlineOptions<Req> {
  /** The header holding the remaining milliseconds (HTTP adapters; required there). */
  header?: string
  /** Which requests may set their deadline with the header (required with `header`): an internal network, say. */
  trust?: (request: Req) => boolean
  /**
   * The header holds the deadline itself, in Date.now() milliseconds, instead of the milliseconds left (default
   * false). It also counts the time the request waited before the guard saw it (in the kernel, behind a busy
   * loop), but needs clocks in sync between the hosts that set and read it (the same host, or NTP's few ms).
   */
  absolute?: boolean
  /**
   * Runs the handler in an async context that holds the deadline, so that undiciGuard and grpcClientGuard pass
   * the remaining time on to downstream calls (default false: the context costs an AsyncLocalStorage run).
   */
  propagate?: boolean
}

export interface DegradeOptions<Req> {
  /** Answers refused, timed-out and failed requests in place of the plain 503 or 429 (docs/guide/degrade.md). */
  fallback?: Fallback<Req>
  /** Milliseconds a handler has to answer before the fallback (or a plain 503) answers for it; a function: per route. */
  timeout?: number | ((request: Req) => number | undefined)
  /** Refuses at once a request whose deadline is shorter than its expected service time (Shed.deadline). */
  deadline?: DeadlineOptions<Req> | false
}

export interface ResolvedDeadline<Req> {
  header: string | undefined
  absolute: boolean
  trust: ((request: Req) => boolean) | undefined
  propagate: boolean
}

export interface ResolvedDegrade<Req> {
  fallback: Fallback<Req> | undefined
  /** A fixed timeout (0: none) or a function of the request. */
  timeout: number | ((request: Req) => number | undefined)
  /** undefined when deadlines are off (HTTP without a header, or `deadline: false`). */
  deadline: ResolvedDeadline<Req> | undefined
}

const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const MAX_TIMEOUT = 2 ** 31 - 1 // setTimeout's range

export function resolveTimeout<Req>(value: unknown, field = 'timeout'): ResolvedDegrade<Req>['timeout'] {
  if (value === undefined) return 0
  if (typeof value === 'function') return value as (request: Req) => number | undefined
  return checkNumber(field, value, { integer: true, min: 1, max: MAX_TIMEOUT })
}

/**
 * `builtIn`: the transport carries a deadline of its own (gRPC), read unless `deadline: false`; otherwise a
 * deadline needs a header and a trust predicate, so that no client sets one unless the application says so.
 */
function resolveDeadline<Req>(value: unknown, builtIn: boolean): ResolvedDeadline<Req> | undefined {
  if (value === false) return undefined
  if (value === undefined)
    return builtIn ? { header: undefined, absolute: false, trust: undefined, propagate: false } : undefined
  const o = checkOptions<DeadlineOptions<Req>>(value, 'deadline')
  const propagate = optionalBoolean('deadline.propagate', o.propagate, false)
  if (builtIn) {
    if (o.header !== undefined)
      throw new InvalidOptionError('deadline.header', o.header, 'absent: gRPC has grpc-timeout')
    return { header: undefined, absolute: false, trust: undefined, propagate }
  }
  if (typeof o.header !== 'string' || !HEADER.test(o.header)) {
    throw new InvalidOptionError('deadline.header', o.header, 'a header name (the remaining milliseconds)')
  }
  const trust = checkFunction<(request: Req) => boolean>('deadline.trust', o.trust)
  const absolute = optionalBoolean('deadline.absolute', o.absolute, false)
  return { header: o.header.toLowerCase(), absolute, trust, propagate }
}

export function resolveDegradeOptions<Req>(o: DegradeOptions<Req>, builtInDeadline: boolean): ResolvedDegrade<Req> {
  return {
    fallback: optionalFunction<Fallback<Req>>('fallback', o.fallback),
    timeout: resolveTimeout<Req>(o.timeout),
    deadline: resolveDeadline<Req>(o.deadline, builtInDeadline),
  }
}

/** A per-request timeout from the option: 0 for none, and 0 for anything a function returns that is not one. */
export function timeoutFor<Req>(timeout: ResolvedDegrade<Req>['timeout'], request: Req): number {
  if (typeof timeout === 'number') return timeout
  let ms: unknown
  try {
    ms = timeout(request)
  } catch {
    return 0 // a broken timeout function leaves the request without one rather than failing it
  }
  return typeof ms === 'number' && ms >= 1 && ms <= MAX_TIMEOUT ? ms : 0
}

import type { BreakerGroup } from '../../components/breakers/breaker-group'
import type { BulkheadPool } from '../../components/bulkhead/bulkhead-pool'
import type { SreBreaker } from '../../components/breakers/sre-breaker'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { RetryBudget } from '../../components/resilience/retry-budget'
import { checkOptions, optionalFunction, optionalNumber } from '../../foundation/common/validate'
import type { Breaker } from '../../components/breakers/breaker'
import { type BreakerChoice, noRoomBreaker, resolveBreakers } from '../../guards/outbound/breaker-port'
import { type BulkheadChoice, noRoomBulkhead, resolveBulkheads } from '../../guards/outbound/bulkhead-port'
import type { Dispatch, GuardPolicy } from '../../guards/outbound/guarded-request'
import { guardedRequest } from './undici-handler-api'
import { type QuotaChoice, QuotaCall, resolveQuotas } from '../../guards/outbound/origin-quotas'
import { type CoalesceChoice, coalescing } from '../../guards/outbound/coalescing'
import { hedgedDispatch } from '../../guards/outbound/hedged-dispatch'
import { type HedgerOptions, Hedger } from '../../components/resilience/hedger'
import { resolveRouting, type UndiciRouting } from './undici-routing'

/** Options of undiciGuard; `bulkheads` holds one adaptive bulkhead per origin (refusals: BulkheadRejectedError). */
export interface UndiciGuardOptions<B extends Breaker = SreBreaker> extends BreakerChoice<B>, BulkheadChoice {
  /**
   * A quota per origin (`http://host:port`): a Quota (this host), a RedisQuota (the fleet), or an OriginQuota with
   * the cost of each call. A call waits for its origin's quota (OverloadError when it cannot have it in time) and
   * the answers' rate-limit headers slow the origin down (docs/guide/integrations.md, "Quotas per origin").
   */
  quotas?: QuotaChoice<UndiciDispatchOptions>
  /**
   * Gray routing (docs/readme/integrations.md, "Gray routing"): `router` (a GrayRouter) picks each request's group
   * and the request goes to `origins[group]` before that origin's breaker, bulkhead and quota apply; `key` gives a
   * request's client (a weight's choice then stays the same for it).
   */
  routing?: UndiciRouting<UndiciDispatchOptions>
  /**
   * Concurrent identical requests share one upstream call (default false). true: GET and HEAD requests without a
   * body, keyed by method, origin and path; or a function giving a request's key (undefined: not shared). Headers
   * are not part of the default key: requests that differ by credentials need a key that says so.
   */
  coalesce?: CoalesceChoice<UndiciDispatchOptions>
  /**
   * Hedged requests for the replayable ones (default false): a second attempt when the first has had no response
   * for a percentile of its origin's recent latency, within the retry `budget` (shared) or, without one, 5 % of
   * requests; the first response wins and the other attempt is aborted. true, or the Hedger options per origin.
   */
  hedging?: boolean | Omit<HedgerOptions, 'budget'>
  /** Caps retries at a share of requests (default: a new RetryBudget, 10 % plus 10 per second); false: no cap. */
  budget?: RetryBudget | false
  /** Attempts per request at most, the first included (default 3; 1 turns retries off). */
  attempts?: number
  /** Ceiling of the first retry's delay, ms; doubles each retry, with full jitter (default 100). */
  baseDelay?: number
  /** Largest delay ceiling, ms (default 5000). */
  maxDelay?: number
  /** Which response statuses count as a failure of the origin (default: 500 and above; 4xx are the caller's). */
  isFailure?: (statusCode: number) => boolean
  /** Methods safe to send again (default GET, HEAD, OPTIONS, PUT, DELETE, TRACE); a streamed body is never replayed. */
  retryMethods?: readonly string[]
  /** Random source in [0, 1) for the jitter (default Math.random). */
  random?: () => number
  /**
   * The header that tells the origin how many milliseconds the inbound caller will still wait, when the request
   * is made inside a guard's `deadline: { propagate: true }` (default 'x-request-timeout-ms'; false: none).
   */
  deadlineHeader?: string | false
}

// Handlers are typed loosely so that the interceptor fits undici's own `compose` types, whatever their version.
export type UndiciInterceptor<B extends Breaker = SreBreaker> = ((
  dispatch: (options: any, handler: any) => boolean,
) => (options: any, handler: any) => boolean) & {
  /** The breakers, one per origin (`http://host:port`). */
  readonly breakers: BreakerGroup<B>
  readonly budget: RetryBudget | undefined
  /** The adaptive bulkheads, one per origin (undefined with `bulkheads: false`). */
  readonly bulkheads: BulkheadPool | undefined
  /** Closes the breakers and the bulkheads if the guard made them. */
  close(): void
}

/** What a quota's `estimate` function is given: the call's undici dispatch options. */
export interface UndiciDispatchOptions {
  origin?: unknown
  path?: string
  method?: string
  headers?: unknown
  body?: unknown
}

const DEFAULT_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']
const serverError = (statusCode: number): boolean => statusCode >= 500

function originOf(origin: unknown): string {
  if (typeof origin === 'string') return origin
  const url = origin as { origin?: unknown } | null | undefined
  return typeof url?.origin === 'string' ? url.origin : String(origin)
}

function defaultCoalesceKey(opts: UndiciDispatchOptions & { upgrade?: unknown }): string | undefined {
  const method = opts.method ?? 'GET'
  if ((method !== 'GET' && method !== 'HEAD') || opts.body != null || opts.upgrade) return undefined
  return `${method} ${originOf(opts.origin)}${opts.path ?? ''}`
}

/** One Hedger per origin (at most 1 000 origins: past it, new origins share the last one made). */
function resolveHedging(value: unknown, budget: RetryBudget | undefined): ((origin: string) => Hedger) | undefined {
  if (value === undefined || value === false) return undefined
  if (value !== true && (value === null || typeof value !== 'object')) {
    throw new InvalidOptionError('hedging', value, 'a boolean, or Hedger options')
  }
  const options = value === true ? {} : (value as Omit<HedgerOptions, 'budget'>)
  const make = () => new Hedger({ ...options, budget: budget ?? 0.05 })
  make().close() // validates the options now, not at the first call
  const hedgers = new Map<string, Hedger>()
  let last: Hedger | undefined
  return (origin) => {
    let hedger = hedgers.get(origin)
    if (hedger === undefined) {
      if (hedgers.size >= 1000 && last !== undefined) return last
      hedger = last = make()
      hedgers.set(origin, hedger)
    }
    return hedger
  }
}

function runLater(request: { run(): boolean; refuse(error: unknown): void }): void {
  try {
    request.run()
  } catch (error) {
    request.refuse(error) // from a promise callback, a throw would be an unhandled rejection
  }
}

/** The caller's AbortSignal (undici's `signal` option may also be an EventEmitter, which is not waited on). */
function abortSignalOf(signal: unknown): AbortSignal | undefined {
  return signal instanceof AbortSignal ? signal : undefined
}

function replayableBody(body: unknown): boolean {
  return body == null || typeof body === 'string' || body instanceof Uint8Array
}

function resolveMethods(value: unknown): Set<string> {
  if (value === undefined) return new Set(DEFAULT_METHODS)
  if (!Array.isArray(value) || value.some((m) => typeof m !== 'string')) {
    throw new InvalidOptionError('retryMethods', value, 'an array of HTTP method names')
  }
  return new Set(value.map((m: string) => m.toUpperCase()))
}

function resolveDeadlineHeader(value: unknown): string | undefined {
  if (value === false) return undefined
  if (value === undefined) return 'x-request-timeout-ms'
  if (typeof value !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value)) {
    throw new InvalidOptionError('deadlineHeader', value, 'a header name, or false')
  }
  return value.toLowerCase()
}

function resolveBudget(value: unknown): RetryBudget | undefined {
  if (value === false) return undefined
  if (value === undefined) return new RetryBudget()
  if (value === null || typeof (value as RetryBudget).tryAcquire !== 'function') {
    throw new InvalidOptionError('budget', value, 'a RetryBudget, or false')
  }
  return value as RetryBudget
}

/**
 * An undici interceptor guarding each origin with a breaker and an adaptive bulkhead, and retrying failed
 * idempotent requests within a retry budget. Works with `undici.request`, any `dispatcher.compose(...)`, and `fetch` (Node's or undici's)
 * through `{ dispatcher }` or `setGlobalDispatcher`. A request the origin's breaker refuses fails at once with
 * BreakerOpenError, one its bulkhead refuses (the origin is saturated) with BulkheadRejectedError (fetch: a
 * TypeError whose `cause` it is).
 *
 *   const dispatcher = new Agent().compose(undiciGuard())
 *   await fetch('http://inventory.internal/stock/42', { dispatcher })
 */
export function undiciGuard<B extends Breaker = SreBreaker>(options?: UndiciGuardOptions<B>): UndiciInterceptor<B> {
  const o = checkOptions<UndiciGuardOptions<B>>(options, 'options')
  const methods = resolveMethods(o.retryMethods)
  const policy: GuardPolicy = {
    attempts: optionalNumber('attempts', o.attempts, 3, { integer: true, min: 1, max: 100 }),
    baseDelay: optionalNumber('baseDelay', o.baseDelay, 100, { min: 0, max: 86_400_000 }),
    maxDelay: optionalNumber('maxDelay', o.maxDelay, 5000, { min: 0, max: 86_400_000 }),
    random: optionalFunction<() => number>('random', o.random) ?? Math.random,
    budget: resolveBudget(o.budget),
    isFailure: optionalFunction<(statusCode: number) => boolean>('isFailure', o.isFailure) ?? serverError,
    deadlineHeader: resolveDeadlineHeader(o.deadlineHeader),
  }
  const route = resolveRouting<UndiciDispatchOptions>(o.routing) // before anything that would need closing
  const { group, owns } = resolveBreakers(o, 'undici')
  const bulkheads = resolveBulkheads(o.bulkheads)
  const quotas = resolveQuotas<UndiciDispatchOptions>(o.quotas)
  const coalesce = coalescing<UndiciDispatchOptions>(o.coalesce, defaultCoalesceKey)
  const hedgerFor = resolveHedging(o.hedging, policy.budget)

  // undici checks that the composed dispatch takes exactly (options, handler).
  const interceptor =
    (dispatch: Dispatch) =>
    (opts: any, handler: unknown): boolean => {
      if (route !== undefined) opts = route(opts)
      const origin = originOf(opts.origin)
      if (coalesce !== undefined) {
        const joined = coalesce(opts, handler)
        if (joined === true) return true // served by a call already in flight
        if (joined !== false) {
          handler = joined
          opts = withoutQueuedAbort(opts)
        }
      }
      const replayable = methods.has(opts.method) && replayableBody(opts.body) && !opts.upgrade
      const breaker = group.get(origin) ?? noRoomBreaker
      const bulkhead = bulkheads.pool === undefined ? undefined : (bulkheads.pool.get(origin) ?? noRoomBulkhead)
      const send = hedgerFor !== undefined && replayable ? hedgedDispatch(dispatch, hedgerFor(origin)) : dispatch
      const request = guardedRequest(handler, opts, policy, send, opts, breaker, origin, replayable, bulkhead)
      policy.budget?.recordRequest()
      const quota = quotas?.(origin)
      if (quota === undefined) return request.run()
      // Waits for the origin's quota first; the attempt starts once it is there.
      const call = (request.quota = new QuotaCall(quota))
      call.take(opts, abortSignalOf(opts.signal)).then(
        () => runLater(request),
        (error: unknown) => request.refuse(error),
      )
      return true
    }
  return Object.assign(interceptor, {
    breakers: group,
    budget: policy.budget,
    bulkheads: bulkheads.pool,
    close: () => {
      if (owns) group.close()
      if (bulkheads.owns) bulkheads.pool?.close()
    },
  })
}

/**
 * undici 8 lets a caller's signal cancel its request while it waits for a connection, through a hook in the
 * options (a symbol, `queued abort`). A coalesced call is shared: the first caller's abort must only take that
 * caller out (CoalescedCall), so the call goes without the hook.
 */
function withoutQueuedAbort(opts: any): any {
  const hook = Object.getOwnPropertySymbols(opts).find((s) => s.description === 'queued abort')
  if (hook === undefined) return opts
  const copy = { ...opts }
  delete copy[hook]
  return copy
}

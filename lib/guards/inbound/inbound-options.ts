import { BbrLimiter } from '../../components/bbr/bbr-limiter'
import type { BbrLimiterOptions } from '../../components/bbr/bbr-options'
import { Priority, type PriorityName } from '../../admission/priority'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { resolveQueueOptions } from '../../admission/queue/queue-options'
import { Switchboard } from '../../components/switches/switchboard'
import { KeyConcurrencyPort, type KeyConcurrencyOptions } from './key-concurrency-port'
import { type DegradeOptions, type ResolvedDegrade, resolveDegradeOptions } from './degrade-options'
import { checkOneOf, checkOptions, optionalFunction, optionalNumber } from '../../foundation/common/validate'
import { checkHeaders } from './rate-limit-headers'
import type { GatewayOptions, RateLimitOptions } from './gateway-options'

/** The longest Retry-After announced, s: a day. */
export const MAX_RETRY_AFTER = 86_400

/**
 * The default `connectionConcurrency`: the concurrent streams most HTTP/2 servers let one session open (nginx 128,
 * Apache and h2o 100, and what Node assumes of a peer before its settings arrive), so that a browser or a client of
 * its own never meets it.
 */
export const DEFAULT_CONNECTION_CONCURRENCY = 100

export interface InboundGuardOptions<Req> extends DegradeOptions<Req>, GatewayOptions<Req> {
  /** The adaptive limiter: an instance, or options to create one (closed by `guard.close()`); false for none. */
  limiter?: BbrLimiter | BbrLimiterOptions | false
  /** A rate limit checked before the limiter; requests over it are answered 429. */
  rateLimit?: RateLimitOptions<Req>
  /**
   * The request's priority class, as the application decides it (from the route, an authenticated tenant...).
   * Without it every request is `defaultPriority`. Nothing a client sends changes the class unless
   * `priorityHeader` / `trustPriority` say so (docs/guide/trust.md).
   */
  priority?: (request: Req) => number | PriorityName
  /** Class of requests `priority` does not classify (default 'normal'). */
  defaultPriority?: PriorityName
  /**
   * A request header (gRPC: metadata key) naming a class (`critical`, `high`, `normal`, `low`). Default: none, or
   * 'x-priority' when `trustPriority` is given. A request `trustPriority` accepts gets the class it names; any
   * other request may only lower its own class with it, never raise it.
   */
  priorityHeader?: string | false
  /**
   * Which requests may choose their class with `priorityHeader` (an internal network, a signed header...). Asked
   * only of requests whose header would raise their class.
   */
  trustPriority?: (request: Req) => boolean
  /** Seconds in the Retry-After header of a 503 (default 1, at least 1). */
  retryAfter?: number
  /**
   * Seconds of random spread added to every Retry-After (503 and 429; default 0): the announced value is drawn
   * from [retryAfter, retryAfter + retryAfterJitter], so that clients shed together do not come back together.
   */
  retryAfterJitter?: number
  /** Random source in [0, 1) for the jitter (default Math.random). */
  random?: () => number
  /** Operators' switches this guard obeys (docs/guide/degrade.md, "Manual switches"). */
  switches?: Switchboard
  /** The request's route, for route switches (read only while a route or class has a switch). */
  route?: (request: Req) => string
  /**
   * Fair shedding (docs/rules/fairness.md): under overload the limiter sheds the requests of keys that take more
   * than their fair share first. `key` names the request's tenant (an API key, an account; not something a client
   * mints freely). A limiter created from options gets `fairness: true` unless they say otherwise.
   */
  fairness?: { key: (request: Req) => string }
  /**
   * A request the limiter refuses may wait this long for a slot, ms, instead of a 503 (docs/rules/queue.md); it is
   * answered 503 with reason 'queue-timeout' when none comes. Given to the limiter the guard creates (a limiter
   * instance takes its own `maxWait`). Default 0: no queue.
   */
  maxWait?: number
  /** The most requests waiting at once in this process (default 128; with maxWait). */
  maxQueue?: number
  /**
   * At most N requests in flight per key (docs/rules/key-concurrency.md): `{ max, key }`, or `{ limiter, key }` with
   * a KeyConcurrencyLimiter (shared across the host, say). Checked after the rate limit; a request over it is
   * answered 429 (Shed.keyConcurrency, fallback reason 'rate-limit').
   */
  keyConcurrency?: KeyConcurrencyOptions<Req>
  /**
   * The most admitted requests one connection holds until their responses are over (default 100; false: no bound):
   * an HTTP/1.1 connection's pipelined requests, an HTTP/2 session's streams, a gRPC connection's calls, answers the
   * client has not read included. A request over it is answered 429 (Shed.connectionConcurrency, fallback reason
   * 'rate-limit'): one client cannot hold the limiter's slots, or the server's memory, with requests it keeps open
   * (docs/guide/trust.md). Behind a proxy that carries many clients on one connection, raise it to what it carries.
   */
  connectionConcurrency?: number | false
}

/** A rate limit as the gate applies it: `headers` resolved to the fields it writes, or undefined for none. */
export interface ResolvedRateLimit<Req> extends Omit<RateLimitOptions<Req>, 'headers'> {
  headers: 'ietf' | 'legacy' | undefined
}

export interface ResolvedInboundOptions<Req> {
  limiter: BbrLimiter | undefined
  ownsLimiter: boolean
  rateLimit: ResolvedRateLimit<Req> | undefined
  priority: ((request: Req) => number | PriorityName) | undefined
  defaultPriority: number
  priorityHeader: string | undefined
  trustPriority: ((request: Req) => boolean) | undefined
  retryAfter: number
  retryAfterJitter: number
  random: () => number
  degrade: ResolvedDegrade<Req>
  switches: Switchboard | undefined
  route: ((request: Req) => string) | undefined
  fairKey: ((request: Req) => string) | undefined
  keyConcurrency: KeyConcurrencyPort<Req> | undefined
  /** 0: no bound. */
  connectionConcurrency: number
}

function resolveFairKey<Req>(value: unknown): ((request: Req) => string) | undefined {
  if (value === undefined) return undefined
  const o = checkOptions<{ key: (request: Req) => string }>(value, 'fairness')
  if (typeof o.key !== 'function') throw new InvalidOptionError('fairness.key', o.key, 'a function of the request')
  return o.key
}

/** The queue options given to the guard, for the limiter it creates; refused with a limiter instance or none. */
function queueOptions(o: { maxWait?: unknown; maxQueue?: unknown; limiter?: unknown }): Partial<BbrLimiterOptions> {
  const given = o.maxWait !== undefined ? 'maxWait' : o.maxQueue !== undefined ? 'maxQueue' : undefined
  if (given === undefined) return {}
  if (o.limiter === false || o.limiter instanceof BbrLimiter)
    throw new InvalidOptionError(given, o[given], 'options of the limiter the guard creates (set it on your limiter)')
  resolveQueueOptions(o.maxWait, o.maxQueue) // named as the guard's own fields when bad
  return { maxWait: o.maxWait as number, maxQueue: o.maxQueue as number | undefined }
}

function resolveLimiter(
  value: unknown,
  fair: boolean,
  queue: Partial<BbrLimiterOptions>,
): { limiter: BbrLimiter | undefined; owns: boolean } {
  if (value === false) {
    if (fair) throw new InvalidOptionError('limiter', value, 'a limiter (fairness needs one)')
    return { limiter: undefined, owns: false }
  }
  if (value instanceof BbrLimiter) {
    if (fair && !value.fair) throw new InvalidOptionError('limiter', value, 'a BbrLimiter made with `fairness`')
    return { limiter: value, owns: false }
  }
  if (
    value !== undefined &&
    (value === null || typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value))
  ) {
    throw new InvalidOptionError('limiter', value, 'a BbrLimiter, BbrLimiter options, or false')
  }
  let options = value as BbrLimiterOptions | undefined
  if (fair && options?.fairness === undefined) options = { ...options, fairness: true }
  if (queue.maxWait !== undefined) options = { ...options, ...queue }
  return { limiter: new BbrLimiter(options), owns: true }
}

/** Resolves a `rateLimit` option (a route's is named by `field`). */
export function resolveRateLimit<Req>(value: unknown, field = 'rateLimit'): ResolvedRateLimit<Req> | undefined {
  if (value === undefined) return undefined
  const o = checkOptions<RateLimitOptions<Req>>(value, field)
  const limiter = o.limiter as { tryAcquire?: unknown } | undefined
  if (limiter === null || typeof limiter !== 'object' || typeof limiter.tryAcquire !== 'function') {
    throw new InvalidOptionError(`${field}.limiter`, limiter, 'a KeyedLimiter or a limiter with tryAcquire()')
  }
  const key = optionalFunction<(request: Req) => string>(`${field}.key`, o.key)
  const headers = checkHeaders(o.limiter, o.headers, `${field}.headers`)
  return { limiter: o.limiter as RateLimitOptions<Req>['limiter'], key, headers }
}

function resolveHeader(value: unknown, trusted: boolean): string | undefined {
  if (value === false) return undefined
  if (value === undefined) return trusted ? 'x-priority' : undefined
  if (typeof value !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value)) {
    throw new InvalidOptionError('priorityHeader', value, 'a header name, or false')
  }
  return value.toLowerCase() // Node and grpc-js lower-case incoming header names
}

/** `builtInDeadline`: the transport carries deadlines of its own (gRPC). */
export function resolveInboundOptions<Req>(options: unknown, builtInDeadline = false): ResolvedInboundOptions<Req> {
  const o = checkOptions<InboundGuardOptions<Req>>(options, 'options')
  const rateLimit = resolveRateLimit<Req>(o.rateLimit)
  const priority = optionalFunction<(request: Req) => number | PriorityName>('priority', o.priority)
  const names = Object.keys(Priority) as PriorityName[]
  const defaultPriority = Priority[checkOneOf('defaultPriority', o.defaultPriority ?? 'normal', names)]
  const trustPriority = optionalFunction<(request: Req) => boolean>('trustPriority', o.trustPriority)
  const priorityHeader = resolveHeader(o.priorityHeader, trustPriority !== undefined)
  if (trustPriority !== undefined && priorityHeader === undefined) {
    throw new InvalidOptionError('priorityHeader', o.priorityHeader, 'a header name when trustPriority is given')
  }
  const retryAfter = optionalNumber('retryAfter', o.retryAfter, 1, { integer: true, min: 1, max: MAX_RETRY_AFTER })
  const retryAfterJitter = optionalNumber('retryAfterJitter', o.retryAfterJitter, 0, {
    integer: true,
    min: 0,
    max: MAX_RETRY_AFTER,
  })
  const random = optionalFunction<() => number>('random', o.random) ?? Math.random
  const connectionConcurrency =
    o.connectionConcurrency === false
      ? 0
      : optionalNumber('connectionConcurrency', o.connectionConcurrency, DEFAULT_CONNECTION_CONCURRENCY, {
          integer: true,
          min: 1,
        })
  const degrade = resolveDegradeOptions<Req>(o, builtInDeadline)
  if (o.switches !== undefined && !(o.switches instanceof Switchboard))
    throw new InvalidOptionError('switches', o.switches, 'a Switchboard')
  const route = optionalFunction<(request: Req) => string>('route', o.route)
  const fairKey = resolveFairKey<Req>(o.fairness)
  const queue = queueOptions(o)
  // Last, so that a bad option above never leaves a limiter (maybe a shared region) behind.
  const keyConcurrency = o.keyConcurrency === undefined ? undefined : new KeyConcurrencyPort<Req>(o.keyConcurrency)
  let resolved
  try {
    resolved = resolveLimiter(o.limiter, fairKey !== undefined, queue)
  } catch (error) {
    keyConcurrency?.close()
    throw error
  }
  const { limiter, owns } = resolved
  return {
    limiter,
    ownsLimiter: owns,
    rateLimit,
    priority,
    defaultPriority,
    priorityHeader,
    trustPriority,
    retryAfter,
    retryAfterJitter,
    random,
    degrade,
    switches: o.switches,
    route,
    fairKey,
    keyConcurrency,
    connectionConcurrency,
  }
}

// The shapes the inbound guard speaks in (its events, stats and request access) and its two answer markers.
import type { BbrLimiterStats } from '../../components/bbr/bbr-limiter'
import type { PriorityName } from '../../admission/priority'
import type { KeyConcurrencyLimiterStats } from '../../components/key-limits/key-concurrency-limiter'
import type { ShedReason } from '../../foundation/errors/shed'

export interface ShedEvent {
  reason: ShedReason
  priority: PriorityName
  /** Seconds the answer asks the client to wait. */
  retryAfter: number
}

export interface InboundGuardStats {
  /** Requests answered 429 by the rate limit. */
  rateLimited: number
  /** Requests answered 429 because their key had its `keyConcurrency` requests in flight (Shed.keyConcurrency). */
  shedKeyConcurrency: number
  /** Requests answered 429 because their connection held its `connectionConcurrency` (Shed.connectionConcurrency). */
  shedConnectionConcurrency: number
  /** Requests refused by an operator's switch (Shed.forced), answered from the fallback when that switch says so. */
  shedForced: number
  /** Requests refused at once because their deadline was shorter than the expected service time (Shed.deadline). */
  shedDeadline: number
  /**
   * Requests answered with the plain error answer (500; gRPC INTERNAL) because one of the application's functions
   * (`priority`, `trustPriority`, a rate-limit, concurrency or fairness key, `route`, `deadline.trust`) threw.
   */
  callbackErrors: number
  /** Admitted requests dropped before their handler ran because their client was already gone. */
  clientGone: number
  /** Requests whose handler did not answer within `timeout`. */
  timedOut: number
  /** Requests answered by the fallback. */
  fallbacks: number
  /**
   * Fallback calls that threw, returned something that is not an answer, or gave an answer Node refused to write
   * (answered plainly instead).
   */
  fallbackErrors: number
  /** The adaptive limiter's stats (undefined without one). */
  limiter: BbrLimiterStats | undefined
  /** The per-key concurrency limiter's stats (undefined without `keyConcurrency`). */
  keyConcurrency: KeyConcurrencyLimiterStats | undefined
  /** Requests an allow entry let past every limit, and those of `skip` routes. */
  bypassed: number
  /** Requests a deny entry refused (403, Shed.denied). */
  denied: number
  /** Requests refused because their key was banned (429, Shed.banned). */
  banned: number
}

/** How the guard reads a framework's request: a header's value and the client's address. */
export interface RequestAccess<Req> {
  header(request: Req, name: string): unknown
  address(request: Req): string | undefined
  /** Milliseconds the caller will still wait, from the transport itself (gRPC's deadline); NaN for none. */
  remaining?(request: Req): number
  /** Checks what the fallback returned (default: an HTTP answer); throws when it is not an answer. */
  checkAnswer?(value: unknown): unknown
  /** The request's method (`GET`; gRPC: `POST`) and URL (path and query; gRPC: the method's path), for `routes`. */
  method?(request: Req): unknown
  url?(request: Req): unknown
  /** The route its framework matched, as it defines it (Fastify: the route's `config`), or undefined. */
  route?(request: Req): object | undefined
}

/** What `answer` returns when the fallback failed: the request gets the plain 503. */
export const FALLBACK_FAILED = null

/** What tryAcquire returns for a request that may wait in the limiter's queue: call `waitForSlot` next. */
export const QUEUED = -100

/**
 * What tryAcquire returns when one of the application's functions threw for the request: nothing is held, answer it
 * with the plain error answer (not the fallback, which may share the broken code).
 */
export const CALLBACK_FAILED = -101

/**
 * What tryAcquire returns for a request of the readiness path (docs/guide/gateway.md, "Readiness"): answer it with
 * `shedReply(code)` (200 or 503, no Retry-After); it holds nothing and is counted nowhere.
 */
export const PROBE_READY = -102
export const PROBE_NOT_READY = -103

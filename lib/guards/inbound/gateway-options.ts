// The inbound guard's gateway options (docs/guide/gateway.md): per-route policy, allow and deny lists, bans, the
// readiness answer, and the rate limit they share. Types only, below everything that resolves them.
import type { PriorityName } from '../../admission/priority'
import type { AccessList } from '../../components/access/access-list'
import type { BanList, BanListOptions } from '../../components/access/ban-list'
import type { Fallback } from './fallback'
import type { KeyConcurrencyOptions } from './key-concurrency-port'
import type { ReadinessOptions } from './readiness'

/** A limiter whose limit is per key: a KeyedLimiter, or anything that answers `tryAcquire(key)`. */
export interface KeyedRateLimiter {
  /** Present on a KeyedLimiter: it makes the limiter keyed (by the client's address) without a `key` function. */
  get?(key: string): unknown
  tryAcquire(key: string): boolean
  /** Milliseconds until `key` may pass again; without it, the 429 says `retryAfter` seconds. */
  retryAfterMs?(key: string): number
}

/** One limit for every request (a TokenBucket, a SlidingWindowLimiter, any `Limiter`). */
export interface GlobalRateLimiter {
  tryAcquire(n?: number): boolean
  retryAfterMs(n?: number): number
}

export interface RateLimitOptions<Req> {
  /**
   * A KeyedLimiter (or an object with `get(key)`), or any limiter with a `key` function: one limit per key, and
   * `tryAcquire(key)` decides. Without either, it is one limit for all requests: `tryAcquire()` decides.
   */
  limiter: KeyedRateLimiter | GlobalRateLimiter
  /** The request's key (default for a keyed limiter: the client's address). */
  key?: (request: Req) => string
  /**
   * The IETF `RateLimit` and `RateLimit-Policy` fields on admitted and refused responses (true), or the
   * `X-RateLimit-*` trio ('legacy'); default false: none (docs/guide/gateway.md, "Rate-limit headers").
   */
  headers?: boolean | 'legacy'
}

/** The guard's `access` option: an AccessList, and the request's key for its `key:` entries. */
export interface AccessOptions<Req> {
  list: AccessList
  /** The request's key for the list's `key:` entries (an API key, an account; default: none, addresses only). */
  key?: (request: Req) => string
  /**
   * The client's address the list's ranges are matched against (default: the connection's peer). Only when a proxy
   * you trust sets it: a forwarded header is whatever the client wrote, unless your proxy overwrites it
   * (docs/guide/trust.md).
   */
  address?: (request: Req) => string | undefined
}

/** The guard's `bans` option: a BanList of your own, or options to make one; and the key a ban applies to. */
export interface BanOptions<Req> extends BanListOptions {
  /** A list of your own (shared between guards, say); the other options are then left out. */
  list?: BanList
  /** The key refusals count against (default: the rate limit's key, else the client's address as it keys it). */
  key?: (request: Req) => string
}

/** What a route declares; every field left out is the guard's own. */
export interface RoutePolicy<Req> {
  /** No limit, queue or timeout for this route (health checks, metrics): deny entries and bans still apply. */
  skip?: boolean
  /** The route's priority class, or a function of the request (replacing the guard's `priority`). */
  priority?: PriorityName | number | ((request: Req) => number | PriorityName)
  /** The route's own rate limit (`{ limiter, key, headers }`), or false for none. */
  rateLimit?: RateLimitOptions<Req> | false
  /** At most N of the route's requests per key in flight (`{ max | limiter, key }`), or false for none. */
  keyConcurrency?: KeyConcurrencyOptions<Req> | false
  /** At most N of the route's requests in flight in this guard (short for a keyConcurrency with one key). */
  concurrency?: number
  /** The route's fallback, or false for none (the plain answers). */
  fallback?: Fallback<Req> | false
  /** Milliseconds the route's handler has to answer, or false for no timeout. */
  timeout?: number | false
}

/** The guard's `routes` option: `'METHOD /path'` or `'/path'` (any method) to a route's policy, or 'skip'. */
export type RouteTableOptions<Req> = Record<string, RoutePolicy<Req> | 'skip'>

export interface GatewayOptions<Req> {
  /**
   * Per-route policy (docs/guide/gateway.md, "Routes"): `'GET /users/:id'` or `'/search'` (any method) to what the
   * route declares (`priority`, `rateLimit`, `keyConcurrency`, `concurrency`, `fallback`, `timeout`), or 'skip'.
   * Matched once per request; a request of no declared route gets the guard's own settings.
   */
  routes?: RouteTableOptions<Req>
  /** Allow and deny entries: an AccessList, or `{ list, key }` to match its `key:` entries too. */
  access?: AccessList | AccessOptions<Req>
  /** Bans for refusals that come too fast: a BanList's options (or `list`), and the key they count against. */
  bans?: BanOptions<Req>
  /**
   * The guard answers `path` (default '/ready') itself, before any check: 200 while the host is ready, 503 once it
   * has shed for a while (docs/guide/gateway.md, "Readiness"). Not for gRPC: use `guard.readiness.ready()`.
   */
  readiness?: true | (ReadinessOptions & { path?: string })
}

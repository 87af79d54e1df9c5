// What every inbound adapter's subpath exports besides its guard: the option, fallback and event types, and the
// deadline a handler has left, so that one import serves a guard and its handlers.
export type { ShedEvent } from './inbound-guard'
export type { InboundGuardOptions } from './inbound-options'
export type { KeyConcurrencyOptions } from './key-concurrency-port'
export type { DeadlineOptions, DegradeOptions } from './degrade-options'
export type { DegradedAnswer, Fallback, FallbackReason, FallbackResponse } from './fallback'
export type {
  AccessOptions,
  BanOptions,
  GatewayOptions,
  RateLimitOptions,
  RoutePolicy,
  RouteTableOptions,
} from './gateway-options'
export { Readiness } from './readiness'
export type { ReadinessOptions, ReadinessStatus } from './readiness'
export { remainingDeadlineMs } from './deadline-context'

// What the inbound guard tells a tracer (bulwark/opentelemetry's OpenTelemetryTraces) about the requests it does not
// simply admit. Each call is made on the request's own async context, so the tracer finds the request's span there.
// A guard without a tracer pays one `undefined` test on those paths, and nothing on the admitting one.
import type { FallbackReason } from './fallback'

/** A tracer of one inbound guard's decisions (InboundGuard.tracer): not exported by any entry. */
export interface GuardTracer {
  /** A request of class `priority` (0-3) was refused with the Shed code `code`, `retryAfter` seconds announced. */
  shed(code: number, priority: number, retryAfter: number): void
  /** The fallback was asked to answer for `reason`; `answer` is what InboundGuard.answer returns. */
  fallback(reason: FallbackReason, answer: unknown): void
  /** A request of class `priority` starts to wait for a slot; what to tell when the wait ends, or undefined. */
  queued(priority: number): QueueWaitTrace | undefined
}

/** One request's wait in the admission queue, told when it ends (on whatever context ends it). */
export interface QueueWaitTrace {
  /** The wait ended with `token` (>= 0: admitted; a Shed code: refused, `retryAfter` seconds announced). */
  end(token: number, retryAfter: number): void
}

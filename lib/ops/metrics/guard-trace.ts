import type { Attributes, Span } from '@opentelemetry/api'

import type { Disposable } from '../../foundation/common/disposable'
import type { Event } from '../../foundation/common/event-source'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import { PRIORITY_NAMES } from '../../admission/priority'
import { Shed, shedReason } from '../../foundation/errors/shed'
import { preciseNow } from '../../foundation/signals/clock'
import type { GuardTracer, QueueWaitTrace } from '../../guards/inbound/guard-tracer'

/** What the traces give a component's tracer: the span to add an event to, when one records now. */
export type SpanSource = () => Span | undefined

/** A component whose live rule a shed can name (docs/rules/live-rules.md). */
interface Ruled {
  stats(): { rules: RuleStats }
  readonly onRuleChange: Event<RuleStats>
}

/** The parts of an inbound guard a trace reads (its adaptive limiter and its per-key limiter rule the sheds). */
export interface TracedGuard {
  tracer: GuardTracer | undefined
  readonly limiter: Ruled | undefined
  readonly keyConcurrency: Ruled | undefined
}

const FALLBACK_OUTCOMES = { answer: 'answered', plain: 'declined', failed: 'failed' } as const

/** The version of `component`'s live rule, kept current by its onRuleChange (read once when the trace begins). */
function followRule(component: Ruled | undefined, to: (version: number) => void): Disposable | undefined {
  if (component === undefined) return undefined
  to(component.stats().rules.version)
  return component.onRuleChange((rule) => to(rule.version))
}

/**
 * One inbound guard's span events (docs/guide/observability.md, "Traces"): `bulwark.shed`, `bulwark.fallback` and
 * `bulwark.queue.wait`, each with the name the guard was added under, on the span of the request they are about.
 */
export class GuardTrace implements GuardTracer {
  private limiterRule = -1
  private keyRule = -1
  private readonly subscriptions: Array<Disposable | undefined>

  constructor(
    private readonly spans: SpanSource,
    private readonly name: string,
    private readonly guard: TracedGuard,
  ) {
    this.subscriptions = [
      followRule(guard.limiter, (v) => (this.limiterRule = v)),
      followRule(guard.keyConcurrency, (v) => (this.keyRule = v)),
    ]
    guard.tracer = this
  }

  shed(code: number, priority: number, retryAfter: number): void {
    const span = this.spans()
    if (span !== undefined) span.addEvent('bulwark.shed', this.shedAttributes(code, priority, retryAfter))
  }

  fallback(reason: string, answer: unknown): void {
    const span = this.spans()
    if (span === undefined) return
    const outcome = answer === undefined ? 'plain' : answer === null ? 'failed' : 'answer'
    span.addEvent('bulwark.fallback', {
      'bulwark.component.name': this.name,
      'bulwark.reason': reason,
      'bulwark.outcome': FALLBACK_OUTCOMES[outcome],
    })
  }

  queued(priority: number): QueueWaitTrace | undefined {
    const span = this.spans()
    if (span === undefined) return undefined
    const start = preciseNow()
    return {
      end: (token, retryAfter) => {
        span.addEvent('bulwark.queue.wait', {
          'bulwark.component.name': this.name,
          'bulwark.priority': PRIORITY_NAMES[priority],
          'bulwark.outcome': token >= 0 ? 'admitted' : shedReason(token),
          'bulwark.queue.duration': (preciseNow() - start) / 1000,
        })
        if (token < 0) span.addEvent('bulwark.shed', this.shedAttributes(token, priority, retryAfter))
      },
    }
  }

  /** Stops tracing the guard. */
  detach(): void {
    if (this.guard.tracer === this) this.guard.tracer = undefined
    for (const subscription of this.subscriptions) subscription?.dispose()
  }

  private shedAttributes(code: number, priority: number, retryAfter: number): Attributes {
    const attributes: Attributes = {
      'bulwark.component.name': this.name,
      'bulwark.reason': shedReason(code),
      'bulwark.priority': PRIORITY_NAMES[priority],
      'bulwark.retry_after': retryAfter,
    }
    const rule = this.ruleOf(code)
    if (rule >= 0) attributes['bulwark.rule.version'] = rule
    return attributes
  }

  /** The version of the live rule of the component that refused with `code` (-1: none has one). */
  private ruleOf(code: number): number {
    if (code === Shed.keyConcurrency) return this.keyRule
    const byLimiter = code === Shed.inFlight || code === Shed.queueDelay || code === Shed.latency
    return byLimiter || code === Shed.queueTimeout ? this.limiterRule : -1
  }
}

import type { Context } from '@opentelemetry/api'

import { type Disposable, toDisposable } from '../../foundation/common/disposable'
import { isComponent } from '../../foundation/common/component-registry'
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions } from '../../foundation/common/validate'
import { coarseNow } from '../../foundation/signals/clock'
import type { CircuitStateChange } from '../../components/breakers/circuit-breaker-options'
import type { Event } from '../../foundation/common/event-source'
import { GuardTrace, type SpanSource, type TracedGuard } from './guard-trace'
import { loadPeer } from './load-peer'

type Api = typeof import('@opentelemetry/api')

export interface OpenTelemetryTracesOptions {
  /** The OpenTelemetry API to use (default: `@opentelemetry/api`, from where the application installed it). */
  api?: Api
}

/** How often the traces ask again whether a context manager is registered, ms of the coarse clock. */
const RECHECK_MS = 1000

const COMPONENTS = 'an inbound guard (or the middleware of a framework adapter) or a CircuitBreaker'

/**
 * Says why a request was shed, in its trace: span events on the active span (docs/guide/observability.md,
 * "Traces") for each shed, fallback answer and admission-queue wait of the inbound guards added (every framework
 * adapter), and for each state change of the circuit breakers added, named as they were added. Nothing is recorded,
 * and nothing is asked of the API per decision, while no OpenTelemetry context manager is registered (no SDK
 * started: no span can be active); that is checked again every second.
 *
 *   const traces = new OpenTelemetryTraces()
 *   traces.add('api', app.guard)   // or the middleware itself: expressGuard(...), fastifyGuard(...)...
 *   traces.add('payments', breaker)
 */
export class OpenTelemetryTraces {
  private readonly api: Api
  private readonly attached = new Set<() => void>()
  /** A context manager is registered: spans can be active. */
  private tracing = false
  private checkedAt = -Infinity
  private closed = false

  constructor(options?: OpenTelemetryTracesOptions) {
    const o = checkOptions<OpenTelemetryTracesOptions>(options, 'options')
    const api = o.api ?? loadPeer<Api>('@opentelemetry/api', 'OpenTelemetryTraces')
    if (api === null || typeof api !== 'object' || typeof api.trace?.getActiveSpan !== 'function') {
      throw new InvalidOptionError('api', o.api, 'the @opentelemetry/api module (1.3 or later)')
    }
    this.api = api
  }

  /** Adds span events for `component` under `name` until the result is disposed (or close()). */
  add(name: string, component: unknown): Disposable {
    if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
      throw new InvalidArgumentError('name', name, 'a string of 1-200 characters')
    }
    if (this.closed) throw new InvalidArgumentError('this', 'closed', 'OpenTelemetryTraces that is not closed')
    const adapted = component instanceof Object ? (component as { guard?: unknown }).guard : undefined
    const guard = isComponent(component, 'InboundGuard') ? component : isComponent(adapted, 'InboundGuard') && adapted
    let detach: () => void
    if (guard) {
      if ((guard as TracedGuard).tracer !== undefined)
        throw new InvalidArgumentError('component', component, 'a guard no OpenTelemetryTraces traces yet')
      const trace = new GuardTrace(this.recordingSpan, name, guard as TracedGuard)
      detach = () => trace.detach()
    } else if (isComponent(component, 'CircuitBreaker')) {
      const changes = (component as { onStateChange: Event<CircuitStateChange> }).onStateChange
      const subscription = changes((change) => this.stateChange(name, change))
      detach = () => subscription.dispose()
    } else {
      throw new InvalidArgumentError('component', component, COMPONENTS)
    }
    this.attached.add(detach)
    return toDisposable(() => {
      if (this.attached.delete(detach)) detach()
    })
  }

  /** Stops every component's events. Idempotent. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const detach of this.attached) detach()
    this.attached.clear()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** The active span, when a context manager is registered and the span records; else undefined. */
  private readonly recordingSpan: SpanSource = () => {
    const now = coarseNow()
    if (now - this.checkedAt >= RECHECK_MS) {
      this.checkedAt = now
      this.tracing = this.contextManagerRegistered()
    }
    if (!this.tracing) return undefined
    const span = this.api.trace.getActiveSpan()
    return span !== undefined && span.isRecording() ? span : undefined
  }

  private stateChange(name: string, change: CircuitStateChange): void {
    this.recordingSpan()?.addEvent('bulwark.breaker.state_change', {
      'bulwark.component.name': name,
      'bulwark.state.from': change.from,
      'bulwark.state.to': change.to,
    })
  }

  /** Whether a context manager is registered: without one, `context.with` does not make its context active. */
  private contextManagerRegistered(): boolean {
    const { context, ROOT_CONTEXT, createContextKey } = this.api
    const probe: Context = ROOT_CONTEXT.setValue(createContextKey('bulwark.traces.probe'), true)
    return context.with(probe, () => context.active() === probe)
  }
}

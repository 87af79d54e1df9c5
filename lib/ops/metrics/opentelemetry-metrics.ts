import type { BatchObservableCallback, Meter, Observable } from '@opentelemetry/api'

import type { Disposable } from '../../foundation/common/disposable'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions } from '../../foundation/common/validate'
import { loadPeer } from './load-peer'
import { METRICS, openTelemetryInstrument, openTelemetryName } from './metric-catalog'
import { MetricComponents, type SeriesOptions } from './metric-components'
import { otelAttributes } from './otel-names'

export interface OpenTelemetryMetricsOptions extends SeriesOptions {
  /** The meter to create the instruments with (default: `metrics.getMeter('bulwark')` of @opentelemetry/api). */
  meter?: Meter
  /** Prefix of every instrument name (default 'bulwark.'). */
  prefix?: string
}

/**
 * Exposes bulwark's components as OpenTelemetry observable instruments (counters for cumulative totals, up-down
 * counters for amounts that add up across workers, gauges for the rest; names in docs/metrics.md), with the same
 * values as PrometheusMetrics and its labels as namespaced attributes (`name` is `bulwark.component.name`,
 * `priority` is `bulwark.priority`...): read from the components' stats() in one batch callback when the SDK
 * collects (no timer).
 *
 *   const metrics = new OpenTelemetryMetrics()   // the global MeterProvider's meter 'bulwark'
 *   metrics.add('api', limiter)
 */
export class OpenTelemetryMetrics {
  readonly meter: Meter
  private readonly components: MetricComponents
  private readonly instruments: Observable[]
  private readonly callback: BatchObservableCallback
  private closed = false

  constructor(options?: OpenTelemetryMetricsOptions) {
    const o = checkOptions<OpenTelemetryMetricsOptions>(options, 'options')
    const prefix = o.prefix ?? 'bulwark.'
    if (typeof prefix !== 'string' || !/^([A-Za-z][A-Za-z0-9_.-]*)?$/.test(prefix)) {
      throw new InvalidOptionError(
        'prefix',
        prefix,
        'an instrument name prefix (a letter, then letters, digits, _ . -)',
      )
    }
    this.components = new MetricComponents({ topKeys: o.topKeys, groupKeys: o.groupKeys })
    const meter =
      o.meter ??
      loadPeer<typeof import('@opentelemetry/api')>('@opentelemetry/api', 'OpenTelemetryMetrics').metrics.getMeter(
        'bulwark',
      )
    if (meter === null || typeof meter !== 'object' || typeof meter.addBatchObservableCallback !== 'function') {
      throw new InvalidOptionError('meter', o.meter, 'an OpenTelemetry Meter (@opentelemetry/api 1.3 or later)')
    }
    this.meter = meter
    this.instruments = METRICS.map((spec) => {
      const name = openTelemetryName(spec, prefix)
      const options = { description: spec.help, unit: spec.unit }
      const instrument = openTelemetryInstrument(spec)
      if (instrument === 'counter') return meter.createObservableCounter(name, options)
      if (instrument === 'updown') return meter.createObservableUpDownCounter(name, options)
      return meter.createObservableGauge(name, options)
    })
    this.callback = (result) => {
      for (const s of this.components.samples())
        result.observe(this.instruments[s.spec.index], s.value, otelAttributes(s.labels))
    }
    meter.addBatchObservableCallback(this.callback, this.instruments)
  }

  /** Reports `component` under `name` (unique among components of its family) until the result is disposed. */
  add(name: string, component: unknown): Disposable {
    return this.components.add(name, component)
  }

  /** Stops observing (the instruments stay with the meter, reporting nothing). Idempotent. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.meter.removeBatchObservableCallback(this.callback, this.instruments)
  }

  [Symbol.dispose](): void {
    this.close()
  }
}

// The OpenTelemetry exporter's tests, run against each metrics SDK major by opentelemetry-sdk<major>.test.ts.
import Module from 'module'
import type * as otelApi from '@opentelemetry/api'
import type * as otelSdk from '@opentelemetry/sdk-metrics'
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics'
import { afterEach, describe, expect, it, vi } from 'vitest'

import { InvalidOptionError } from '../../lib/index'
import { OpenTelemetryMetrics } from '../../lib/ops/metrics/opentelemetry'
import { drivenComponents } from './components'

type Api = typeof otelApi
type Sdk = typeof otelSdk

/** One OpenTelemetry metrics SDK and the API it goes with, as an application would have them installed. */
export interface Otel {
  label: string
  api: Api
  sdk: Sdk
  /** Where the application's `@opentelemetry/api` resolves (what bulwark loads for its default meter). */
  apiPath: string
}

/** Runs `fn` as in an application whose only `@opentelemetry/api` is the one at `apiPath`. */
function withApiAt<T>(apiPath: string, fn: () => T): T {
  const resolver = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string }
  const resolve = resolver._resolveFilename
  resolver._resolveFilename = function (request, ...rest) {
    return request === '@opentelemetry/api' ? apiPath : resolve.call(this, request, ...rest)
  }
  try {
    return fn()
  } finally {
    resolver._resolveFilename = resolve
  }
}

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
})

interface Point {
  instrument: string
  type: number
  /** For sums: a counter (true) or an up-down counter (false). */
  monotonic: boolean | undefined
  unit: string
  attributes: Record<string, unknown>
  value: number
}

function points(resource: ResourceMetrics): Point[] {
  return resource.scopeMetrics.flatMap((scope) =>
    scope.metrics.flatMap((m) =>
      (m.dataPoints as Array<{ attributes: Record<string, unknown>; value: number }>).map((p) => ({
        instrument: m.descriptor.name,
        type: m.dataPointType,
        monotonic: (m as { isMonotonic?: boolean }).isMonotonic,
        unit: m.descriptor.unit,
        attributes: p.attributes,
        value: p.value,
      })),
    ),
  )
}

const value = (ps: Point[], instrument: string, attributes: Record<string, unknown>) =>
  ps.find((p) => p.instrument === instrument && Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))

/** The OpenTelemetryMetrics tests against one SDK (each SDK in its own test file: one API copy per process). */
export function otelSuite({ label, api, sdk, apiPath }: Otel): void {
  /** A reader that collects only when asked (no timer). */
  class ManualReader extends sdk.MetricReader {
    protected async onShutdown(): Promise<void> {}
    protected async onForceFlush(): Promise<void> {}
  }

  function setup() {
    const reader = new ManualReader()
    const provider = new sdk.MeterProvider({ readers: [reader] })
    const c = drivenComponents()
    cleanups.push(c.close, () => provider.shutdown())
    const collect = async () => points((await reader.collect()).resourceMetrics as ResourceMetrics)
    return { provider, reader, c, collect }
  }

  describe(`OpenTelemetryMetrics (${label})`, () => {
    it('observes the same metrics as Prometheus, its labels as bulwark.* attributes, as gauges and cumulative counters with units', async () => {
      const { provider, c, collect } = setup()
      const metrics = new OpenTelemetryMetrics({ meter: provider.getMeter('bulwark'), topKeys: 2 })
      metrics.add('api', c.limiter)
      metrics.add('payments', c.sre)
      metrics.add('products', c.topk)
      metrics.add('login', c.bucket)
      metrics.add('edge', c.handler)
      metrics.add('tenants', c.perKey)
      metrics.add('items', c.hotParameters)
      const ps = await collect()

      // Every attribute is namespaced (docs/metrics.md): no bare `name`, `key` or `state`.
      expect(new Set(ps.flatMap((p) => Object.keys(p.attributes)).filter((k) => !k.startsWith('bulwark.')))).toEqual(
        new Set(),
      )
      // An amount that adds up across workers is an up-down counter; a share is a gauge; a total a counter.
      expect(value(ps, 'bulwark.limiter.in_flight', { 'bulwark.component.name': 'api' })).toMatchObject({
        type: sdk.DataPointType.SUM,
        monotonic: false,
        unit: '{request}',
        value: 3,
      })
      expect(value(ps, 'bulwark.limiter.load.utilization', { 'bulwark.component.name': 'api' })).toMatchObject({
        type: sdk.DataPointType.GAUGE,
        unit: '1',
        value: 1,
      })
      expect(value(ps, 'bulwark.limiter.response_time.min', { 'bulwark.component.name': 'api' })).toMatchObject({
        unit: 's',
        value: 0.001,
      })
      expect(
        value(ps, 'bulwark.limiter.shed_requests', {
          'bulwark.component.name': 'api',
          'bulwark.priority': 'low',
          'bulwark.reason': 'in-flight',
        }),
      ).toMatchObject({
        type: sdk.DataPointType.SUM,
        monotonic: true,
        value: 3,
      })
      expect(
        value(ps, 'bulwark.limiter.admitted_requests', {
          'bulwark.component.name': 'api',
          'bulwark.priority': 'normal',
        })?.value,
      ).toBe(2)
      expect(
        value(ps, 'bulwark.breaker.state', { 'bulwark.component.name': 'payments', 'bulwark.state': 'open' })?.value,
      ).toBe(1)
      expect(
        value(ps, 'bulwark.breaker.drop.probability', { 'bulwark.component.name': 'payments' })?.value,
      ).toBeCloseTo(15 / 26, 12)
      expect(
        ps
          .filter((p) => p.instrument === 'bulwark.hotkeys.top_key.occurrences')
          .map((p) => [p.attributes['bulwark.key'], p.value]),
      ).toEqual([
        ['x', 30],
        ['y', 20],
      ])
      expect(value(ps, 'bulwark.ratelimit.permit.available', { 'bulwark.component.name': 'login' })?.value).toBe(15)
      expect(value(ps, 'bulwark.guard.rate_limited_requests', { 'bulwark.component.name': 'edge' })?.value).toBe(1)
      const edge = { 'bulwark.component.name': 'edge' }
      expect(value(ps, 'bulwark.guard.connection_shed_requests', edge)?.value).toBe(1)
      const errors = (source: string) =>
        value(ps, 'bulwark.guard.application_errors', { ...edge, 'bulwark.source': source })
      expect([errors('callback')?.value, errors('fallback')?.value]).toEqual([1, 1])
      const tenants = { 'bulwark.component.name': 'tenants' }
      expect(value(ps, 'bulwark.key_concurrency.in_flight.limit', tenants)?.value).toBe(2)
      expect(value(ps, 'bulwark.key_concurrency.in_flight', tenants)).toMatchObject({ monotonic: false, value: 3 })
      expect(value(ps, 'bulwark.key_concurrency.requests', { ...tenants, 'bulwark.outcome': 'shed' })).toMatchObject({
        monotonic: true,
        value: 1,
      })
      expect(value(ps, 'bulwark.key_concurrency.key.in_flight', { ...tenants, 'bulwark.key': 'acme' })?.value).toBe(2)
      const items = { 'bulwark.component.name': 'items' }
      expect(value(ps, 'bulwark.hot_parameter.limited_value.count', items)).toMatchObject({
        monotonic: false,
        value: 2,
      })
      expect(value(ps, 'bulwark.hot_parameter.refused_calls', { ...items, 'bulwark.reason': 'hot' })).toMatchObject({
        monotonic: true,
        unit: '{call}',
        value: 1,
      })
      expect(
        ps
          .filter((p) => p.instrument === 'bulwark.hot_parameter.hot_value.occurrences')
          .map((p) => [p.attributes['bulwark.key'], p.value]),
      ).toEqual([
        ['item-1', 3],
        ['item-2', 1],
      ])

      // Cumulative: a later collection carries the new total.
      c.limiter.tryAcquire('low')
      expect(
        value(await collect(), 'bulwark.limiter.shed_requests', {
          'bulwark.component.name': 'api',
          'bulwark.priority': 'low',
          'bulwark.reason': 'in-flight',
        })?.value,
      ).toBe(4)
    })

    it('reads each component once per collection and stops observing when closed', async () => {
      const { provider, c, collect } = setup()
      const metrics = new OpenTelemetryMetrics({ meter: provider.getMeter('bulwark'), prefix: 'gw.' })
      metrics.add('api', c.limiter)
      const stats = vi.spyOn(c.limiter, 'stats')
      expect(value(await collect(), 'gw.limiter.in_flight', { 'bulwark.component.name': 'api' })?.value).toBe(3)
      expect(stats).toHaveBeenCalledTimes(1)
      metrics.close()
      c.limiter.tryAcquire('low')
      await collect()
      expect(stats).toHaveBeenCalledTimes(1) // no longer observed (the SDK keeps reporting the last cumulative values)
    })

    it("uses the global MeterProvider's meter by default", async () => {
      const { provider, c, collect } = setup()
      api.metrics.setGlobalMeterProvider(provider)
      cleanups.push(() => api.metrics.disable())
      const metrics = withApiAt(apiPath, () => new OpenTelemetryMetrics())
      metrics.add('api', c.limiter)
      expect(
        value(await collect(), 'bulwark.limiter.in_flight.limit', { 'bulwark.component.name': 'api' })?.value,
      ).toBe(2)
      metrics.close()
    })

    it('rejects a bad meter or prefix', () => {
      expect(() => new OpenTelemetryMetrics({ meter: {} as never })).toThrow(InvalidOptionError)
      expect(() => new OpenTelemetryMetrics({ meter: {} as never })).toThrow(
        /option `meter` must be an OpenTelemetry Meter/,
      )
      expect(() => new OpenTelemetryMetrics({ prefix: '1x' })).toThrow(/option `prefix`/)
    })
  })
}

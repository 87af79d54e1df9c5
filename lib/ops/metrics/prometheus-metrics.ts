import type * as PromClient from 'prom-client'

import type { Disposable } from '../../foundation/common/disposable'
import { checkOptions } from '../../foundation/common/validate'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { loadPeer } from './load-peer'
import { METRICS, prometheusName } from './metric-catalog'
import { MetricComponents, type SeriesOptions } from './metric-components'

export interface PrometheusMetricsOptions extends SeriesOptions {
  /** The prom-client registry to register in (default: prom-client's global `register`). */
  registry?: PromClient.Registry<PromClient.RegistryContentType>
  /** Prefix of every metric name (default 'bulwark_'). */
  prefix?: string
}

const namePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/

type PromMetric = PromClient.Gauge<string> | PromClient.Counter<string>

/**
 * Exposes bulwark's components to Prometheus through prom-client: limiters, breakers, top-ks, rate limiters and
 * retry budgets, read from their stats() when the registry is scraped (no timer). Shared components report
 * host-wide values from every worker.
 *
 *   const metrics = new PrometheusMetrics({ registry })
 *   metrics.add('api', limiter)
 *   metrics.add('payments', breaker)
 */
export class PrometheusMetrics {
  readonly registry: PromClient.Registry<PromClient.RegistryContentType>
  readonly prefix: string
  private readonly components: MetricComponents
  private readonly metrics: PromMetric[] = []

  constructor(options?: PrometheusMetricsOptions) {
    const o = checkOptions<PrometheusMetricsOptions>(options, 'options')
    const prefix = o.prefix ?? 'bulwark_'
    if (typeof prefix !== 'string' || (prefix !== '' && !namePattern.test(prefix))) {
      throw new InvalidOptionError('prefix', prefix, 'a Prometheus metric name prefix ([a-zA-Z_:][a-zA-Z0-9_:]*)')
    }
    this.components = new MetricComponents({ topKeys: o.topKeys, groupKeys: o.groupKeys })
    const client = loadPeer<typeof PromClient>('prom-client', 'PrometheusMetrics')
    this.registry = o.registry ?? client.register
    if (
      this.registry === null ||
      typeof this.registry !== 'object' ||
      typeof this.registry.registerMetric !== 'function'
    ) {
      throw new InvalidOptionError('registry', o.registry, 'a prom-client Registry')
    }
    this.prefix = prefix
    const components = this.components
    for (const spec of METRICS) {
      const samples = () => components.samples().filter((s) => s.spec === spec)
      const config = {
        name: prometheusName(spec, prefix),
        help: spec.help,
        labelNames: spec.labels,
        registers: [this.registry],
      }
      this.metrics.push(
        spec.kind === 'counter'
          ? new client.Counter({
              ...config,
              collect() {
                this.reset()
                for (const s of samples()) this.inc(s.labels, s.value)
              },
            })
          : new client.Gauge({
              ...config,
              collect() {
                this.reset()
                for (const s of samples()) this.set(s.labels, s.value)
              },
            }),
      )
    }
  }

  /** Reports `component` under `name` (unique among components of its family) until the result is disposed. */
  add(name: string, component: unknown): Disposable {
    return this.components.add(name, component)
  }

  /** Removes bulwark's metrics from the registry. Idempotent. */
  close(): void {
    for (const metric of this.metrics.splice(0)) {
      this.registry.removeSingleMetric((metric as unknown as { name: string }).name)
    }
  }

  [Symbol.dispose](): void {
    this.close()
  }
}

// bulwark/prometheus: bulwark's components as prom-client metrics (prom-client is an optional peer dependency).
export { PrometheusMetrics } from './prometheus-metrics'
export type { PrometheusMetricsOptions } from './prometheus-metrics'
export type { SeriesOptions } from './metric-components'
export { MissingPeerDependencyError } from '../../foundation/errors/missing-peer-dependency-error'

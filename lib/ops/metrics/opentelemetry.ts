// bulwark/opentelemetry: bulwark's components as OpenTelemetry observable instruments (@opentelemetry/api is an
// optional peer dependency).
export { OpenTelemetryMetrics } from './opentelemetry-metrics'
export type { OpenTelemetryMetricsOptions } from './opentelemetry-metrics'
export type { SeriesOptions } from './metric-components'
export { MissingPeerDependencyError } from '../../foundation/errors/missing-peer-dependency-error'

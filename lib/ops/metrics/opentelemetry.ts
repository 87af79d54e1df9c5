// bulwark/opentelemetry: bulwark's components as OpenTelemetry observable instruments, and why requests were shed as
// span events (@opentelemetry/api is an optional peer dependency).
export { OpenTelemetryMetrics } from './opentelemetry-metrics'
export type { OpenTelemetryMetricsOptions } from './opentelemetry-metrics'
export type { SeriesOptions } from './metric-components'
export { OpenTelemetryTraces } from './opentelemetry-traces'
export type { OpenTelemetryTracesOptions } from './opentelemetry-traces'
export { MissingPeerDependencyError } from '../../foundation/errors/missing-peer-dependency-error'

// The OpenTelemetry column of the metric catalogue (lib/ops/metrics/metric-catalog.ts): each metric's instrument name
// and kind, chosen by OpenTelemetry's naming guidelines (docs/metrics.md): dotted namespaces, no unit and no `total`
// in the name (the unit is the instrument's), counters of things pluralized, up-down counters not (`.count`,
// `in_flight`), `.limit` for a bound and `.utilization` for a share of one. A current amount that adds up across
// workers is an up-down counter; a value that does not (a ratio, a state, a time, an estimate) is a gauge.
export type OtelInstrument = 'counter' | 'updown' | 'gauge'

// Keyed by the catalogue's metric names; metric-catalog.ts checks that the two lists are the same (it imports this
// file, so this file cannot name its type).
export const OTEL = {
  limiterInFlight: ['limiter.in_flight', 'updown'],
  limiterMaxInFlight: ['limiter.in_flight.limit', 'gauge'],
  limiterLoad: ['limiter.load.utilization', 'gauge'],
  limiterMinRt: ['limiter.response_time.min', 'gauge'],
  limiterMaxPass: ['limiter.completions.peak', 'gauge'],
  limiterQueueDelay: ['limiter.queue_delay', 'gauge'],
  limiterAdmit: ['limiter.admit.ratio', 'gauge'],
  limiterLatencyLimit: ['limiter.latency.limit', 'gauge'],
  limiterLatencyShedding: ['limiter.latency.shedding', 'gauge'],
  limiterBaseRt: ['limiter.response_time.base', 'gauge'],
  limiterAdmitted: ['limiter.admitted_requests', 'counter'],
  limiterShed: ['limiter.shed_requests', 'counter'],
  limiterInvalidReleases: ['limiter.invalid_releases', 'counter'],
  limiterQueuePending: ['limiter.queue.pending', 'updown'],
  limiterQueueTimeouts: ['limiter.queue.timeouts', 'counter'],
  guardRateLimited: ['guard.rate_limited_requests', 'counter'],
  guardConnectionShed: ['guard.connection_shed_requests', 'counter'],
  guardApplicationErrors: ['guard.application_errors', 'counter'],
  guardAccess: ['guard.access_decisions', 'counter'],
  breakerState: ['breaker.state', 'gauge'],
  breakerDrop: ['breaker.drop.probability', 'gauge'],
  breakerFailure: ['breaker.failure.ratio', 'gauge'],
  breakerWindowRequests: ['breaker.window.calls', 'gauge'],
  breakerGroupKeys: ['breaker.group.key.count', 'updown'],
  hotkeysKeyCount: ['hotkeys.top_key.occurrences', 'gauge'],
  hotkeysCounted: ['hotkeys.counted', 'gauge'],
  hotkeysCachedValues: ['hotkeys.cache.value.count', 'updown'],
  ratelimitAvailable: ['ratelimit.permit.available', 'updown'],
  ratelimitCapacity: ['ratelimit.permit.limit', 'gauge'],
  ratelimitKeys: ['ratelimit.key.count', 'updown'],
  ratelimitKeyEvents: ['ratelimit.key.events', 'counter'],
  ratelimitTableSlots: ['ratelimit.table.slot.limit', 'gauge'],
  ratelimitTableDecisions: ['ratelimit.table.decisions', 'counter'],
  ratelimitHeavyKeyRefused: ['ratelimit.table.heavy_key.refused', 'gauge'],
  redisDecisions: ['ratelimit.redis.decisions', 'counter'],
  redisFailures: ['ratelimit.redis.failures', 'counter'],
  redisCalls: ['ratelimit.redis.calls', 'counter'],
  redisState: ['ratelimit.redis.state', 'gauge'],
  redisPending: ['ratelimit.redis.decision.pending', 'updown'],
  redisRefusedKeys: ['ratelimit.redis.refused_key.count', 'updown'],
  bulkheadUpstreams: ['bulkhead.upstream.count', 'updown'],
  bulkheadInFlight: ['bulkhead.in_flight', 'updown'],
  bulkheadLimit: ['bulkhead.in_flight.limit', 'gauge'],
  bulkheadShedding: ['bulkhead.shedding', 'gauge'],
  bulkheadBaseRt: ['bulkhead.response_time.base', 'gauge'],
  bulkheadCalls: ['bulkhead.calls', 'counter'],
  keyConcurrencyMax: ['key_concurrency.in_flight.limit', 'gauge'],
  keyConcurrencyInFlight: ['key_concurrency.in_flight', 'updown'],
  keyConcurrencyKeys: ['key_concurrency.key.count', 'updown'],
  keyConcurrencyRequests: ['key_concurrency.requests', 'counter'],
  keyConcurrencyKeyInFlight: ['key_concurrency.key.in_flight', 'gauge'],
  hotParameterLimited: ['hot_parameter.limited_value.count', 'updown'],
  hotParameterRefused: ['hot_parameter.refused_calls', 'counter'],
  hotParameterValueCount: ['hot_parameter.hot_value.occurrences', 'gauge'],
  retryBudgetRequests: ['retry_budget.window.requests', 'gauge'],
  retryBudgetRetries: ['retry_budget.window.retries', 'gauge'],
  retryBudgetAvailable: ['retry_budget.retry.available', 'gauge'],
  rulesVersion: ['rules.version', 'gauge'],
  rulesCanary: ['rules.canary', 'gauge'],
  rulesSourceUp: ['rules.source.up', 'gauge'],
  rulesStale: ['rules.staleness', 'gauge'],
  rulesFromDisk: ['rules.from_disk', 'gauge'],
  rulesRefused: ['rules.refusals', 'counter'],
  rulesApplied: ['rules.applied_versions', 'counter'],
  routingRouted: ['routing.routed_requests', 'counter'],
  routingVersion: ['routing.rules.version', 'gauge'],
  shadowEnabled: ['shadow.enabled', 'gauge'],
  shadowWouldRefuse: ['shadow.would_refuse_requests', 'counter'],
} satisfies Record<string, readonly [name: string, instrument: OtelInstrument]>

// The OpenTelemetry attribute of each Prometheus label, by OpenTelemetry's naming guidelines (docs/metrics.md):
// lowercase, dotted, and namespaced under `bulwark.`, as a library's own attributes are, so that none can collide
// with a semantic convention or another library's (`name` alone is too general: `bulwark.component.name`). The
// values are the same as Prometheus's. A label without an attribute here does not compile.
export type MetricLabel =
  'name' | 'component' | 'priority' | 'reason' | 'state' | 'key' | 'upstream' | 'outcome' | 'event' | 'source' | 'group'

export const OTEL_ATTRIBUTES: Record<MetricLabel, string> = {
  name: 'bulwark.component.name',
  component: 'bulwark.component.family',
  priority: 'bulwark.priority',
  reason: 'bulwark.reason',
  state: 'bulwark.state',
  key: 'bulwark.key',
  upstream: 'bulwark.upstream',
  outcome: 'bulwark.outcome',
  event: 'bulwark.event',
  source: 'bulwark.source',
  group: 'bulwark.group',
}

/** A sample's Prometheus labels as OpenTelemetry attributes. */
export function otelAttributes(labels: Readonly<Record<string, string>>): Record<string, string> {
  const attributes: Record<string, string> = {}
  for (const label in labels) attributes[OTEL_ATTRIBUTES[label as MetricLabel]] = labels[label]
  return attributes
}

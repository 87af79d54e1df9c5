// Every metric bulwark exposes, once: Prometheus (lib/ops/metrics/prometheus-metrics.ts) and OpenTelemetry
// (lib/ops/metrics/opentelemetry-metrics.ts) both build their instruments from this list; docs/metrics.md lists it.
import { type MetricLabel, OTEL, type OtelInstrument } from './otel-names'

export interface MetricSpec {
  /** Position in METRICS. */
  readonly index: number
  /** Its name in the catalogue: `limiterInFlight`. */
  readonly key: MetricName
  /**
   * The component family: limiter, guard, breaker, bulkhead, hotkeys, ratelimit, key_concurrency, hot_parameter,
   * retry_budget.
   */
  readonly family: string
  /** The measured thing, snake_case, without unit: `in_flight`. */
  readonly base: string
  readonly kind: 'gauge' | 'counter'
  /** UCUM unit as OpenTelemetry takes it: 's', '1' or an annotation such as '{request}'. */
  readonly unit: string
  /** A share in [0, 1] (Prometheus names end in `_ratio`). */
  readonly ratio: boolean
  readonly help: string
  readonly labels: readonly MetricLabel[]
}

type Def = Omit<MetricSpec, 'index' | 'key'>

const gauge = (
  family: string,
  base: string,
  unit: string,
  labels: MetricLabel[],
  help: string,
  ratio = false,
): Def => ({
  family,
  base,
  kind: 'gauge',
  unit,
  ratio,
  help,
  labels,
})
const counter = (family: string, base: string, unit: string, labels: MetricLabel[], help: string): Def => ({
  family,
  base,
  kind: 'counter',
  unit,
  ratio: false,
  help,
  labels,
})

const N: MetricLabel[] = ['name']
const defs = {
  limiterInFlight: gauge(
    'limiter',
    'in_flight',
    '{request}',
    N,
    'Requests admitted and not yet released (host-wide for a shared limiter).',
  ),
  limiterMaxInFlight: gauge(
    'limiter',
    'max_in_flight',
    '{request}',
    N,
    "Capacity estimate: requests in flight admitted at saturation (Little's law, never below minInFlight).",
  ),
  limiterLoad: gauge(
    'limiter',
    'load',
    '1',
    N,
    'Load signal the limiter last read (CPU or event-loop utilization), as a share of full.',
    true,
  ),
  limiterMinRt: gauge(
    'limiter',
    'min_response_time',
    's',
    N,
    'Smallest mean response time of a completed window bucket.',
  ),
  limiterMaxPass: gauge(
    'limiter',
    'peak_completions',
    '{request}',
    N,
    'Completed requests in the busiest completed window bucket.',
  ),
  limiterQueueDelay: gauge(
    'limiter',
    'queue_delay',
    's',
    N,
    "This thread's event-loop queueing delay at the limiter's last control step.",
  ),
  limiterAdmit: gauge(
    'limiter',
    'admit',
    '1',
    N,
    'Share of normal-class requests admitted under queueing delay (1: not shedding for delay).',
    true,
  ),
  limiterLatencyLimit: gauge(
    'limiter',
    'latency_limit',
    '{request}',
    N,
    'The limit on requests in flight learned from latency (the latency check; 0 until its first measurement).',
  ),
  limiterLatencyShedding: gauge(
    'limiter',
    'latency_shedding',
    '1',
    N,
    '1 while the latency check holds requests to its limit (the response time stays inflated over the base), else 0.',
  ),
  limiterBaseRt: gauge(
    'limiter',
    'base_response_time',
    's',
    N,
    'The base response time the latency check learned (the response time without a queue downstream).',
  ),
  limiterAdmitted: counter(
    'limiter',
    'admitted',
    '{request}',
    ['name', 'priority'],
    'Requests admitted, by priority class.',
  ),
  limiterShed: counter(
    'limiter',
    'shed',
    '{request}',
    ['name', 'priority', 'reason'],
    'Requests shed, by priority class and reason (in-flight, queue-delay, latency).',
  ),
  limiterInvalidReleases: counter(
    'limiter',
    'invalid_releases',
    '{call}',
    N,
    'release() calls with a token that was not outstanding (ignored).',
  ),
  limiterQueuePending: gauge(
    'limiter',
    'queue_pending',
    '{request}',
    N,
    "Requests waiting for a slot in this process's admission queue (a limiter made with maxWait).",
  ),
  limiterQueueTimeouts: counter(
    'limiter',
    'queue_timeouts',
    '{request}',
    N,
    "Requests of this process's admission queue shed after waiting maxWait (reason queue-timeout).",
  ),
  guardRateLimited: counter(
    'guard',
    'rate_limited',
    '{request}',
    N,
    'Requests an inbound guard answered 429 because of its rate limit.',
  ),
  guardConnectionShed: counter(
    'guard',
    'connection_shed',
    '{request}',
    N,
    'Requests an inbound guard answered 429 because their connection held connectionConcurrency admitted requests.',
  ),
  guardApplicationErrors: counter(
    'guard',
    'application_errors',
    '{request}',
    ['name', 'source'],
    "Requests an inbound guard answered plainly because the application's code failed: a function of its options threw (source callback), or the fallback threw or gave an answer Node could not write (source fallback).",
  ),
  guardAccess: counter(
    'guard',
    'access',
    '{request}',
    ['name', 'outcome'],
    "Requests an inbound guard's access list and bans decided at once: let past every limit by an allow entry or a skipped route (outcome bypassed), refused 403 by a deny entry (denied), refused 429 for a ban (banned).",
  ),
  breakerState: gauge(
    'breaker',
    'state',
    '1',
    ['name', 'key', 'state'],
    'Breaker state: 1 for the current state (closed, open, half-open), 0 for the others.',
  ),
  breakerDrop: gauge(
    'breaker',
    'drop',
    '1',
    ['name', 'key'],
    'Probability that an SRE breaker rejects the next call.',
    true,
  ),
  breakerFailure: gauge(
    'breaker',
    'failure',
    '1',
    ['name', 'key'],
    "Share of the window's calls that failed (or were slow, for a slowCallRatio circuit breaker).",
    true,
  ),
  breakerWindowRequests: gauge(
    'breaker',
    'window_requests',
    '{request}',
    ['name', 'key'],
    "Calls counted in the breaker's rolling window.",
  ),
  breakerGroupKeys: gauge('breaker', 'group_keys', '{key}', N, 'Keys holding a breaker in a BreakerGroup.'),
  hotkeysKeyCount: gauge(
    'hotkeys',
    'top_key_occurrences',
    '{occurrence}',
    ['name', 'key'],
    'Estimated count of each of the heaviest keys of a top-k (host-wide when shared).',
  ),
  hotkeysCounted: gauge(
    'hotkeys',
    'counted',
    '{occurrence}',
    N,
    'Increments counted by the sketch, halved by each fading.',
  ),
  hotkeysCachedValues: gauge(
    'hotkeys',
    'cached_values',
    '{value}',
    N,
    'Values held by a hot-key cache in this thread.',
  ),
  ratelimitAvailable: gauge('ratelimit', 'available', '{permit}', N, 'Permits a rate limiter has available now.'),
  ratelimitCapacity: gauge(
    'ratelimit',
    'capacity',
    '{permit}',
    N,
    "Most permits available at once: a token bucket's burst, a sliding window's limit.",
  ),
  ratelimitKeys: gauge('ratelimit', 'keys', '{key}', N, 'Keys holding a limiter in a KeyedLimiter.'),
  ratelimitKeyEvents: counter(
    'ratelimit',
    'key_events',
    '{key}',
    ['name', 'event'],
    'Keyed limiters created, evicted (pool full, at rest), expired (idle, at rest) and new keys refused (pool full of keys not at rest).',
  ),
  ratelimitTableSlots: gauge(
    'ratelimit',
    'table_slots',
    '{slot}',
    N,
    "Slots of a KeyedLimiter's table (its table form): twice maxKeys, all made at construction.",
  ),
  ratelimitTableDecisions: counter(
    'ratelimit',
    'table_decisions',
    '{decision}',
    ['name', 'outcome'],
    "Decisions of a KeyedLimiter's table in this process other than an admission on the key's own slot: refused (the key's own limit), overflow-admitted and overflow-refused (no slot: the limit keys without one share), contended (refused: a word kept changing), long-key (over maxKeyLength, decided on the overflow).",
  ),
  ratelimitHeavyKeyRefused: gauge(
    'ratelimit',
    'heavy_key_refused',
    '{request}',
    ['name', 'key'],
    "Refusals (sampled) of each of the keys a KeyedLimiter's table refused most, host-wide when shared, up to topKeys.",
  ),
  redisDecisions: counter(
    'ratelimit',
    'redis_decisions',
    '{decision}',
    ['name', 'source'],
    "A Redis rate limiter's decisions, by who made them: redis, local (refused on the host after Redis refused the key), insurance.",
  ),
  redisFailures: counter(
    'ratelimit',
    'redis_failures',
    '{decision}',
    ['name', 'reason'],
    'Decisions a Redis rate limiter sent to insurance because Redis failed them: timeout, error, not-ready (client disconnected).',
  ),
  redisCalls: counter(
    'ratelimit',
    'redis_calls',
    '{call}',
    N,
    'Script calls a Redis rate limiter sent to Redis (each carries the decisions of one event-loop turn).',
  ),
  redisState: gauge(
    'ratelimit',
    'redis_state',
    '1',
    ['name', 'state'],
    'Where a Redis rate limiter sends decisions: 1 for the current route (redis, insurance), 0 for the other.',
  ),
  redisPending: gauge('ratelimit', 'redis_pending', '{decision}', N, 'Decisions waiting for Redis now.'),
  redisRefusedKeys: gauge(
    'ratelimit',
    'redis_refused_keys',
    '{key}',
    N,
    'Keys a Redis rate limiter refuses on the host now, because Redis refused them less than their wait ago.',
  ),
  bulkheadUpstreams: gauge('bulkhead', 'upstreams', '{upstream}', N, 'Upstreams holding a bulkhead in a pool.'),
  bulkheadInFlight: gauge(
    'bulkhead',
    'in_flight',
    '{call}',
    ['name', 'upstream'],
    "Calls in flight to the upstream (host-wide for a shared pool's bulkheads).",
  ),
  bulkheadLimit: gauge(
    'bulkhead',
    'limit',
    '{call}',
    ['name', 'upstream'],
    "The limit on the upstream's calls in flight learned from its latency.",
  ),
  bulkheadShedding: gauge(
    'bulkhead',
    'shedding',
    '1',
    ['name', 'upstream'],
    '1 while the bulkhead holds the upstream to its limit (its latency is inflated), else 0.',
  ),
  bulkheadBaseRt: gauge(
    'bulkhead',
    'base_response_time',
    's',
    ['name', 'upstream'],
    "The upstream's base response time the bulkhead learned.",
  ),
  bulkheadCalls: counter(
    'bulkhead',
    'calls',
    '{call}',
    ['name', 'upstream', 'outcome'],
    'Calls to the upstream, admitted or shed by its bulkhead.',
  ),
  keyConcurrencyMax: gauge(
    'key_concurrency',
    'max',
    '{request}',
    N,
    'Requests in flight a key may have at once (the live rule in force).',
  ),
  keyConcurrencyInFlight: gauge(
    'key_concurrency',
    'in_flight',
    '{request}',
    N,
    "Requests this process's limiter admitted and has not released yet, all keys.",
  ),
  keyConcurrencyKeys: gauge('key_concurrency', 'keys', '{key}', N, 'Keys the limiter holds now.'),
  keyConcurrencyRequests: counter(
    'key_concurrency',
    'requests',
    '{request}',
    ['name', 'outcome'],
    'Requests the limiter admitted or shed (their key had max in flight, or no room for a new key).',
  ),
  keyConcurrencyKeyInFlight: gauge(
    'key_concurrency',
    'key_in_flight',
    '{request}',
    ['name', 'key'],
    "A key's requests in flight (host-wide when shared), for this process's busiest keys, up to topKeys.",
  ),
  hotParameterLimited: gauge(
    'hot_parameter',
    'limited_values',
    '{value}',
    N,
    'Hot values that have a limiter of their own now (at most k).',
  ),
  hotParameterRefused: counter(
    'hot_parameter',
    'refused',
    '{call}',
    ['name', 'reason'],
    "Calls refused: by a hot value's own limit (reason hot), by the limit the other values share (others), or for a value that is not a string (invalid-argument).",
  ),
  hotParameterValueCount: gauge(
    'hot_parameter',
    'hot_value_occurrences',
    '{occurrence}',
    ['name', 'key'],
    'Estimated count of each of the hot values (host-wide when shared), the heaviest first, up to topKeys.',
  ),
  retryBudgetRequests: gauge(
    'retry_budget',
    'requests',
    '{request}',
    N,
    "First attempts recorded in the retry budget's window.",
  ),
  retryBudgetRetries: gauge('retry_budget', 'retries', '{request}', N, "Retries granted in the retry budget's window."),
  retryBudgetAvailable: gauge('retry_budget', 'available', '{request}', N, 'Retries that would still be granted now.'),
  rulesVersion: gauge(
    'rules',
    'version',
    '1',
    N,
    "The version of the fleet's rules this host obeys (0: none yet); name is the application namespace.",
  ),
  rulesCanary: gauge('rules', 'canary', '1', N, "1 while this host takes the rule source's canary, else 0."),
  rulesSourceUp: gauge(
    'rules',
    'source_up',
    '1',
    N,
    "1 while the host's watcher is connected to the rule source, else 0.",
  ),
  rulesStale: gauge(
    'rules',
    'staleness',
    's',
    N,
    "Seconds since the host's watcher last heard the rule source: how stale the rules it obeys may be.",
  ),
  rulesFromDisk: gauge(
    'rules',
    'from_disk',
    '1',
    N,
    '1 while the host obeys the last good rules read from disk, not yet confirmed by the source, else 0.',
  ),
  rulesRefused: counter(
    'rules',
    'refused',
    '{rule}',
    N,
    "Documents and rules the host's watcher refused (a failed check, a region that would not take a rule).",
  ),
  rulesApplied: counter('rules', 'applied_versions', '{version}', N, "Versions the host's watcher applied."),
  routingRouted: counter(
    'routing',
    'routed',
    '{request}',
    ['name', 'group'],
    'Requests a gray router sent to each upstream group (this process).',
  ),
  routingVersion: gauge(
    'routing',
    'rules_version',
    '1',
    N,
    "The version of a gray router's rules: +2 with every change, host-wide when shared.",
  ),
  shadowEnabled: gauge(
    'shadow',
    'enabled',
    '1',
    ['name', 'component'],
    '1 while the component decides in shadow mode (counts what it would refuse, admits it), else 0.',
  ),
  shadowWouldRefuse: counter(
    'shadow',
    'would_refuse',
    '{request}',
    ['name', 'component', 'reason', 'priority'],
    'Requests admitted in shadow mode that the component would have refused, by reason (and priority class).',
  ),
}

export type MetricName = keyof typeof defs

// Every metric has its OpenTelemetry name, and every OpenTelemetry name is a metric's: checked when compiled.
const OTEL_BY_METRIC: Record<MetricName, readonly [name: string, instrument: OtelInstrument]> &
  Record<Exclude<keyof typeof OTEL, MetricName>, never> = OTEL

/** The catalogue, by name. */
export const METRIC: Record<MetricName, MetricSpec> = Object.fromEntries(
  Object.entries(defs).map(([key, def], index) => [key, { ...def, key, index }]),
) as Record<MetricName, MetricSpec>

export const METRICS: readonly MetricSpec[] = Object.values(METRIC)

/** `bulwark_limiter_in_flight`, `bulwark_limiter_shed_total`, `bulwark_limiter_min_response_time_seconds`... */
export function prometheusName(spec: MetricSpec, prefix: string): string {
  const unit = spec.unit === 's' ? '_seconds' : spec.ratio ? '_ratio' : ''
  return `${prefix}${spec.family}_${spec.base}${unit}${spec.kind === 'counter' ? '_total' : ''}`
}

/** `bulwark.limiter.in_flight`, `bulwark.limiter.shed_requests`: the OpenTelemetry column (lib/ops/metrics/otel-names.ts). */
export function openTelemetryName(spec: MetricSpec, prefix: string): string {
  return `${prefix}${OTEL_BY_METRIC[spec.key][0]}`
}

/** Counter, up-down counter or gauge (lib/ops/metrics/otel-names.ts). */
export function openTelemetryInstrument(spec: MetricSpec): OtelInstrument {
  return OTEL_BY_METRIC[spec.key][1]
}

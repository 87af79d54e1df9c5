// What each kind of component contributes to the metrics, read from its own stats() at collection time. Only types
// are imported from the components: a kind is recognised by the class its module registered (component-registry).
import type { BbrLimiter } from '../../components/bbr/bbr-limiter'
import { PRIORITY_NAMES } from '../../admission/priority'
import type { Breaker } from '../../components/breakers/breaker'
import type { BreakerGroup } from '../../components/breakers/breaker-group'
import type { CircuitBreaker } from '../../components/breakers/circuit-breaker'
import type { SreBreaker } from '../../components/breakers/sre-breaker'
import type { AdaptiveBulkhead } from '../../components/bulkhead/adaptive-bulkhead'
import type { BulkheadPool } from '../../components/bulkhead/bulkhead-pool'
import type { HeavyKeeper } from '../../components/hotkeys/heavy-keeper'
import type { HotKeyCache } from '../../components/hotkeys/hot-key-cache'
import type { InboundGuard } from '../../guards/inbound/inbound-guard'
import type { HotParameterLimiter } from '../../components/key-limits/hot-parameter-limiter'
import type { KeyConcurrencyLimiter } from '../../components/key-limits/key-concurrency-limiter'
import type { KeyedLimiter } from '../../components/ratelimit/keyed-limiter'
import type { RedisRateLimiter } from '../../components/ratelimit/redis/redis-rate-limiter'
import type { SlidingWindowLimiter } from '../../components/ratelimit/sliding-window-limiter'
import type { TokenBucket } from '../../components/ratelimit/token-bucket'
import type { RetryBudget } from '../../components/resilience/retry-budget'
import type { GrayRouter } from '../../components/routing/gray-router'
import type { RulesFollowerStats } from '../../foundation/live-rules/fleet-region'
import type { RuleStats } from '../../foundation/live-rules/live-rules'
import { isComponent } from '../../foundation/common/component-registry'
import type { ExportedKindName } from '../kinds/component-kinds'
import { METRIC, type MetricSpec } from './metric-catalog'
import { sampleShadow, sumShadow } from './shadow-samples'

export type Labels = Record<string, string>

/** Receives one value of one metric. */
export type Emit = (spec: MetricSpec, value: number, labels: Labels) => void

export interface SampleLimits {
  /** Keys reported per top-k. */
  topKeys: number
  /** Breakers reported per BreakerGroup (those not closed first). */
  groupKeys: number
}

export type Sampler = (name: string, component: never, emit: Emit, limits: SampleLimits) => void

// Label values are bounded so that a pathological key cannot blow up a scrape.
const MAX_LABEL = 128
const label = (value: string) => (value.length > MAX_LABEL ? `${value.slice(0, MAX_LABEL - 1)}…` : value)

function sampleLimiter(name: string, limiter: BbrLimiter, emit: Emit): void {
  const s = limiter.stats()
  const n = { name }
  emit(METRIC.limiterInFlight, s.inFlight, n)
  emit(METRIC.limiterMaxInFlight, s.maxInFlight, n)
  emit(METRIC.limiterLoad, s.load / 1000, n)
  emit(METRIC.limiterMinRt, s.minRt / 1000, n)
  emit(METRIC.limiterMaxPass, s.maxPass, n)
  emit(METRIC.limiterQueueDelay, s.queueDelay / 1000, n)
  emit(METRIC.limiterAdmit, s.admitFraction, n)
  emit(METRIC.limiterInvalidReleases, s.invalidReleases, n)
  if (s.latency !== undefined) {
    emit(METRIC.limiterLatencyLimit, s.latency.limit, n)
    emit(METRIC.limiterLatencyShedding, s.latency.shedding ? 1 : 0, n)
    emit(METRIC.limiterBaseRt, s.latency.baseRt / 1000, n)
  }
  if (s.queue !== undefined) {
    emit(METRIC.limiterQueuePending, s.queue.length, n)
    emit(METRIC.limiterQueueTimeouts, s.queue.timedOut, n)
  }
  sampleShadow(name, 'limiter', s.rules, emit)
  for (const priority of PRIORITY_NAMES) {
    const c = s.byPriority[priority]
    emit(METRIC.limiterAdmitted, c.admitted, { name, priority })
    emit(METRIC.limiterShed, c.shedInFlight, { name, priority, reason: 'in-flight' })
    emit(METRIC.limiterShed, c.shedQueueDelay, { name, priority, reason: 'queue-delay' })
    emit(METRIC.limiterShed, c.shedLatency, { name, priority, reason: 'latency' })
  }
}

function sampleGuard(name: string, guard: InboundGuard<unknown>, emit: Emit, limits: SampleLimits): void {
  const s = guard.stats()
  emit(METRIC.guardRateLimited, s.rateLimited, { name })
  emit(METRIC.guardConnectionShed, s.shedConnectionConcurrency, { name })
  emit(METRIC.guardApplicationErrors, s.callbackErrors, { name, source: 'callback' })
  emit(METRIC.guardApplicationErrors, s.fallbackErrors, { name, source: 'fallback' })
  emit(METRIC.guardAccess, s.bypassed, { name, outcome: 'bypassed' })
  emit(METRIC.guardAccess, s.denied, { name, outcome: 'denied' })
  emit(METRIC.guardAccess, s.banned, { name, outcome: 'banned' })
  if (guard.limiter !== undefined) sampleLimiter(name, guard.limiter, emit)
  if (guard.keyConcurrency !== undefined) sampleKeyConcurrency(name, guard.keyConcurrency, emit, limits)
}

const SRE_STATES = ['closed', 'open'] as const
const CIRCUIT_STATES = ['closed', 'open', 'half-open'] as const

/** A breaker's metrics; returns its rule's stats (a group adds its breakers' shadow counts up). */
function sampleBreaker(labels: Labels, breaker: SreBreaker | CircuitBreaker, emit: Emit): RuleStats {
  if (isComponent(breaker, 'SreBreaker')) {
    const s = (breaker as SreBreaker).stats()
    for (const state of SRE_STATES) emit(METRIC.breakerState, s.state === state ? 1 : 0, { ...labels, state })
    emit(METRIC.breakerDrop, s.dropProbability, labels)
    emit(METRIC.breakerFailure, s.calls > 0 ? 1 - s.accepts / s.calls : 0, labels)
    emit(METRIC.breakerWindowRequests, s.calls, labels)
    if (labels.key === undefined) sampleShadow(labels.name, 'breaker', s.rules, emit)
    return s.rules
  }
  const s = (breaker as CircuitBreaker).stats()
  for (const state of CIRCUIT_STATES) emit(METRIC.breakerState, s.state === state ? 1 : 0, { ...labels, state })
  emit(METRIC.breakerFailure, s.badRatio, labels)
  emit(METRIC.breakerWindowRequests, s.calls, labels)
  if (labels.key === undefined) sampleShadow(labels.name, 'breaker', s.rules, emit)
  return s.rules
}

function sampleGroup(name: string, group: BreakerGroup<Breaker>, emit: Emit, limits: SampleLimits): void {
  emit(METRIC.breakerGroupKeys, group.size, { name })
  const open: Array<[string, SreBreaker | CircuitBreaker]> = []
  const closed: Array<[string, SreBreaker | CircuitBreaker]> = []
  group.forEach((breaker, key) => {
    if (!(isComponent(breaker, 'SreBreaker') || isComponent(breaker, 'CircuitBreaker'))) return
    ;(breaker.state === 'closed' ? closed : open).push([key, breaker as SreBreaker | CircuitBreaker])
  })
  const rules = [...open, ...closed]
    .slice(0, limits.groupKeys)
    .map(([key, breaker]) => sampleBreaker({ name, key: label(key) }, breaker, emit))
  sampleShadow(name, 'breaker', sumShadow(rules), emit)
}

/** A bulkhead's metrics; returns its rule's stats (a pool adds its bulkheads' shadow counts up). */
function sampleBulkhead(labels: Labels, bulkhead: AdaptiveBulkhead, emit: Emit): RuleStats {
  const s = bulkhead.stats()
  emit(METRIC.bulkheadInFlight, s.inFlight, labels)
  emit(METRIC.bulkheadLimit, s.latency.limit, labels)
  emit(METRIC.bulkheadShedding, s.latency.shedding ? 1 : 0, labels)
  emit(METRIC.bulkheadBaseRt, s.latency.baseRt / 1000, labels)
  emit(METRIC.bulkheadCalls, s.admitted, { ...labels, outcome: 'admitted' })
  emit(METRIC.bulkheadCalls, s.shed, { ...labels, outcome: 'shed' })
  return s.rules
}

/** A pool's bulkheads, those holding calls back first, up to the group limit; their shadow counts as one. */
function samplePool(name: string, pool: BulkheadPool, emit: Emit, limits: SampleLimits): void {
  emit(METRIC.bulkheadUpstreams, pool.size, { name })
  const shedding: Array<[string, AdaptiveBulkhead]> = []
  const calm: Array<[string, AdaptiveBulkhead]> = []
  pool.forEach((bulkhead, upstream) => (bulkhead.stats().latency.shedding ? shedding : calm).push([upstream, bulkhead]))
  const rules = [...shedding, ...calm]
    .slice(0, limits.groupKeys)
    .map(([upstream, bulkhead]) => sampleBulkhead({ name, upstream: label(upstream) }, bulkhead, emit))
  sampleShadow(name, 'bulkhead', sumShadow(rules), emit)
}

function sampleTopK<K extends string | Uint8Array>(
  name: string,
  topk: HeavyKeeper<K>,
  emit: Emit,
  limits: SampleLimits,
): void {
  emit(METRIC.hotkeysCounted, topk.total, { name })
  for (const item of topk.list().slice(0, limits.topKeys)) {
    const key = typeof item.key === 'string' ? item.key : Buffer.from(item.key as Uint8Array).toString('hex')
    emit(METRIC.hotkeysKeyCount, item.count, { name, key: label(key) })
  }
}

function sampleHotKeyCache(name: string, cache: HotKeyCache, emit: Emit, limits: SampleLimits): void {
  sampleTopK(name, cache.topk, emit, limits)
  emit(METRIC.hotkeysCachedValues, cache.size, { name })
}

function sampleLocalLimiter(name: string, limiter: TokenBucket | SlidingWindowLimiter, emit: Emit): void {
  sampleShadow(name, 'ratelimit', limiter.stats().rules, emit)
  emit(METRIC.ratelimitAvailable, limiter.available(), { name })
  emit(
    METRIC.ratelimitCapacity,
    isComponent(limiter, 'TokenBucket') ? (limiter as TokenBucket).burst : (limiter as SlidingWindowLimiter).limit,
    { name },
  )
}

const TABLE_OUTCOMES = [
  ['refused', 'refused'],
  ['overflow-admitted', 'overflowAdmitted'],
  ['overflow-refused', 'overflowRefused'],
  ['contended', 'contended'],
  ['long-key', 'longKeys'],
] as const

/**
 * A KeyedLimiter: its keys and key events; the table form also its slots, its decisions in this process by outcome
 * and, when topKeys asks (keys come from requests and can be personal data), the keys it refused most.
 */
function sampleKeyed(name: string, keyed: KeyedLimiter, emit: Emit, limits: SampleLimits): void {
  const table = keyed.table
  if (table === undefined) {
    const s = keyed.stats()
    emit(METRIC.ratelimitKeys, s.size, { name })
    emit(METRIC.ratelimitKeyEvents, s.created, { name, event: 'created' })
    emit(METRIC.ratelimitKeyEvents, s.evicted, { name, event: 'evicted' })
    emit(METRIC.ratelimitKeyEvents, s.expired, { name, event: 'expired' })
    emit(METRIC.ratelimitKeyEvents, s.refused, { name, event: 'refused' })
    return
  }
  sampleShadow(name, 'ratelimit', keyed.stats().table?.rules, emit)
  emit(METRIC.ratelimitKeys, table.size, { name })
  emit(METRIC.ratelimitKeyEvents, table.own('created'), { name, event: 'created' })
  emit(METRIC.ratelimitKeyEvents, table.own('reused'), { name, event: 'evicted' })
  emit(METRIC.ratelimitTableSlots, table.capacity, { name })
  for (const [outcome, counter] of TABLE_OUTCOMES)
    emit(METRIC.ratelimitTableDecisions, table.own(counter), { name, outcome })
  if (limits.topKeys === 0) return
  for (const item of table.heaviest(limits.topKeys))
    emit(METRIC.ratelimitHeavyKeyRefused, item.refused, { name, key: label(item.key) })
}

const REDIS_STATES = ['redis', 'insurance'] as const

function sampleRedis(name: string, limiter: RedisRateLimiter, emit: Emit): void {
  const s = limiter.stats()
  for (const source of ['redis', 'local', 'insurance'] as const)
    emit(METRIC.redisDecisions, s[source], { name, source })
  emit(METRIC.redisFailures, s.timeouts, { name, reason: 'timeout' })
  emit(METRIC.redisFailures, s.errors, { name, reason: 'error' })
  emit(METRIC.redisFailures, s.notReady, { name, reason: 'not-ready' })
  emit(METRIC.redisCalls, s.calls, { name })
  for (const state of REDIS_STATES) emit(METRIC.redisState, s.state === state ? 1 : 0, { name, state })
  emit(METRIC.redisPending, s.pending, { name })
  emit(METRIC.redisRefusedKeys, s.refusedKeys, { name })
  sampleShadow(name, 'ratelimit', s.rules, emit)
}

function sampleRetryBudget(name: string, budget: RetryBudget, emit: Emit): void {
  const s = budget.stats()
  emit(METRIC.retryBudgetRequests, s.requests, { name })
  emit(METRIC.retryBudgetRetries, s.retries, { name })
  emit(METRIC.retryBudgetAvailable, s.available, { name })
  sampleShadow(name, 'retry_budget', s.rules, emit)
}

/**
 * A KeyConcurrencyLimiter: its rule, this process's counts, its table's keys and, when topKeys asks (keys come from
 * requests and can be personal data), the keys with the most in flight, up to topKeys.
 */
function sampleKeyConcurrency(name: string, limiter: KeyConcurrencyLimiter, emit: Emit, limits: SampleLimits): void {
  const s = limiter.stats()
  const n = { name }
  emit(METRIC.keyConcurrencyMax, s.max, n)
  emit(METRIC.keyConcurrencyInFlight, s.inFlight, n)
  emit(METRIC.keyConcurrencyKeys, s.size, n)
  emit(METRIC.keyConcurrencyRequests, s.admitted, { name, outcome: 'admitted' })
  emit(METRIC.keyConcurrencyRequests, s.shed, { name, outcome: 'shed' })
  sampleShadow(name, 'key_concurrency', s.rules, emit)
  if (limits.topKeys === 0) return
  const busy: Array<[string, number]> = []
  limiter.forEachKey((key, inFlight) => {
    if (inFlight > 0) busy.push([key, inFlight])
  })
  busy.sort((a, b) => b[1] - a[1])
  for (const [key, inFlight] of busy.slice(0, limits.topKeys))
    emit(METRIC.keyConcurrencyKeyInFlight, inFlight, { name, key: label(key) })
}

/**
 * A HotParameterLimiter: how many hot values have a limiter now, its refusals by reason and, when topKeys asks (values
 * come from requests and can be personal data), the hot values with their counts.
 */
function sampleHotParameters(name: string, limiter: HotParameterLimiter, emit: Emit, limits: SampleLimits): void {
  const s = limiter.stats()
  emit(METRIC.hotParameterLimited, s.limited, { name })
  emit(METRIC.hotParameterRefused, s.refusedHot, { name, reason: 'hot' })
  emit(METRIC.hotParameterRefused, s.refusedOthers, { name, reason: 'others' })
  emit(METRIC.hotParameterRefused, s.invalidArguments, { name, reason: 'invalid-argument' })
  sampleShadow(name, 'hot_parameter', s.rules, emit) // its table's (docs/rules/shadow.md)
  if (limits.topKeys === 0) return
  for (const item of limiter.hotValues().slice(0, limits.topKeys))
    emit(METRIC.hotParameterValueCount, item.count, { name, key: label(item.value) })
}

/** A host's follower of a fleet's rule source: the version it obeys and how fresh, what its watcher refused. */
function sampleRules(name: string, follower: { stats(): RulesFollowerStats }, emit: Emit): void {
  const s = follower.stats()
  const n = { name }
  emit(METRIC.rulesVersion, s.version, n)
  emit(METRIC.rulesCanary, s.canary ? 1 : 0, n)
  emit(METRIC.rulesSourceUp, s.sourceUp ? 1 : 0, n)
  // Never heard: as stale as can be said without an infinity, which some backends refuse.
  emit(METRIC.rulesStale, s.staleMs === Infinity ? Number.MAX_SAFE_INTEGER / 1000 : s.staleMs / 1000, n)
  emit(METRIC.rulesFromDisk, s.fromDisk ? 1 : 0, n)
  emit(METRIC.rulesRefused, s.refused, n)
  emit(METRIC.rulesApplied, s.applied, n)
}

/** A gray router: the requests this process sent to each group, and its rules' version. */
function sampleRouter(name: string, router: GrayRouter, emit: Emit): void {
  const s = router.stats()
  emit(METRIC.routingVersion, s.version, { name })
  for (const [group, count] of Object.entries(s.routed)) emit(METRIC.routingRouted, count, { name, group })
}

/** What each kind the exporters take reports (ops/kinds lists them, the most specific first). */
export const SAMPLERS: { readonly [K in ExportedKindName]: Sampler } = {
  BbrLimiter: sampleLimiter as Sampler,
  InboundGuard: sampleGuard as Sampler,
  SreBreaker: ((name, b, emit) => sampleBreaker({ name }, b, emit)) as Sampler,
  CircuitBreaker: ((name, b, emit) => sampleBreaker({ name }, b, emit)) as Sampler,
  BreakerGroup: sampleGroup as Sampler,
  AdaptiveBulkhead: ((name, b, emit) =>
    sampleShadow(name, 'bulkhead', sampleBulkhead({ name, upstream: '' }, b, emit), emit)) as Sampler,
  BulkheadPool: samplePool as Sampler,
  HotKeyCache: sampleHotKeyCache as Sampler,
  HeavyKeeper: sampleTopK as Sampler,
  TokenBucket: sampleLocalLimiter as Sampler,
  SlidingWindowLimiter: sampleLocalLimiter as Sampler,
  KeyedLimiter: sampleKeyed as Sampler,
  RedisRateLimiter: sampleRedis as Sampler,
  RetryBudget: sampleRetryBudget as Sampler,
  KeyConcurrencyLimiter: sampleKeyConcurrency as Sampler,
  HotParameterLimiter: sampleHotParameters as Sampler,
  GrayRouter: sampleRouter as Sampler,
  RulesFollower: sampleRules as Sampler,
}

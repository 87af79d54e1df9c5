// The kinds of component that the operations side knows, one descriptor each: the name its class registers under
// (foundation/common/component-registry.ts) and is exported as, how a message names one, its metric family, and
// the kinds of region its shared instances are named with. The exporters' samplers (ops/metrics), the inspectors of
// `bulwark top` (ops/top) and what `bulwark set` attaches to (ops/cli) are tables keyed by these names, typed so
// that a kind added here and missing there does not compile; test/ops/kinds.test.ts checks the registry and the
// public names against this list. The functions stay in their folders: this one sits below them all.

/** One kind of component. */
export interface ComponentKindDescriptor {
  /** The class's name: what its module registers it under, and its public name. */
  readonly name: string
  /** How an error message names one ('a BbrLimiter'). */
  readonly named: string
  /** Its metric family (the exporters' names are unique within one), or undefined when it is not exported. */
  readonly family: string | undefined
  /** The kinds of its regions (`<kind>.<namespace>.<shared>`), which top inspects and set attaches to. */
  readonly regions: readonly string[]
}

/**
 * Every kind, the most specific first: the exporters take the first kind whose registered class a component is an
 * instance of.
 */
export const COMPONENT_KINDS = [
  { name: 'BbrLimiter', named: 'a BbrLimiter', family: 'limiter', regions: ['bbr'] },
  { name: 'InboundGuard', named: 'an inbound guard', family: 'limiter', regions: [] },
  { name: 'SreBreaker', named: 'an SreBreaker', family: 'breaker', regions: ['sre'] },
  { name: 'CircuitBreaker', named: 'a CircuitBreaker', family: 'breaker', regions: ['circuit'] },
  { name: 'BreakerGroup', named: 'a BreakerGroup', family: 'breaker', regions: [] },
  { name: 'AdaptiveBulkhead', named: 'an AdaptiveBulkhead', family: 'bulkhead', regions: ['bulkhead'] },
  { name: 'BulkheadPool', named: 'a BulkheadPool', family: 'bulkhead', regions: [] },
  { name: 'HotKeyCache', named: 'a HotKeyCache', family: 'hotkeys', regions: [] },
  { name: 'HeavyKeeper', named: 'a HeavyKeeper', family: 'hotkeys', regions: ['heavykeeper'] },
  { name: 'TokenBucket', named: 'a TokenBucket', family: 'ratelimit', regions: ['token-bucket'] },
  { name: 'SlidingWindowLimiter', named: 'a SlidingWindowLimiter', family: 'ratelimit', regions: ['sliding-window'] },
  { name: 'KeyedLimiter', named: 'a KeyedLimiter', family: 'ratelimit', regions: ['keyed-limiter'] },
  // Its live rule's region, made with `shared` (the decisions' state is in Redis).
  { name: 'RedisRateLimiter', named: 'a RedisRateLimiter', family: 'ratelimit', regions: ['redis-rate-limiter'] },
  { name: 'RetryBudget', named: 'a RetryBudget', family: 'retry_budget', regions: ['retry-budget'] },
  {
    name: 'KeyConcurrencyLimiter',
    named: 'a KeyConcurrencyLimiter',
    family: 'key_concurrency',
    // Its keyed table of every key's count, with its live rules.
    regions: ['key-concurrency-limiter'],
  },
  { name: 'HotParameterLimiter', named: 'a HotParameterLimiter', family: 'hot_parameter', regions: [] },
  { name: 'GrayRouter', named: 'a GrayRouter', family: 'routing', regions: ['routing'] },
  // The process's follower of a fleet's rule source (ops/fleet), and the host's region its watcher writes.
  { name: 'RulesFollower', named: 'a RulesFollower', family: 'rules', regions: ['fleet'] },
  { name: 'Switchboard', named: 'a Switchboard', family: undefined, regions: ['switches'] },
] as const satisfies readonly ComponentKindDescriptor[]

export type ComponentKind = (typeof COMPONENT_KINDS)[number]
export type ComponentKindName = ComponentKind['name']
/** The kinds the exporters report. */
export type ExportedKind = Extract<ComponentKind, { family: string }>
export type ExportedKindName = ExportedKind['name']
/** Every kind of region a component of bulwark makes. */
export type RegionKind = ComponentKind['regions'][number]

export const EXPORTED_KINDS: readonly ExportedKind[] = COMPONENT_KINDS.filter(
  (k): k is ExportedKind => k.family !== undefined,
)

/** The components the exporters take, named for an error message: 'a BbrLimiter, an inbound guard, ... or a X'. */
export const EXPORTED_NAMES = `${EXPORTED_KINDS.slice(0, -1)
  .map((k) => k.named)
  .join(', ')} or ${EXPORTED_KINDS[EXPORTED_KINDS.length - 1].named}`

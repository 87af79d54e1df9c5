// Each component class registers itself here when its module loads. The exporters (bulwark/prometheus,
// bulwark/opentelemetry) recognise a component by the classes registered, so they load no component's code: a
// component that exists was loaded, and registered, by whoever made it (docs/guide/install.md, "Entry points and
// what loading costs").

/** The component kinds the exporters report. */
export type ComponentKindName =
  | 'BbrLimiter'
  | 'InboundGuard'
  | 'SreBreaker'
  | 'CircuitBreaker'
  | 'BreakerGroup'
  | 'AdaptiveBulkhead'
  | 'BulkheadPool'
  | 'HotKeyCache'
  | 'HeavyKeeper'
  | 'TokenBucket'
  | 'SlidingWindowLimiter'
  | 'KeyedLimiter'
  | 'RedisRateLimiter'
  | 'RetryBudget'
  | 'KeyConcurrencyLimiter'
  | 'HotParameterLimiter'
  | 'RulesFollower'

type ComponentClass = abstract new (...args: never[]) => unknown

const registered = new Map<ComponentKindName, ComponentClass>()

/** Called once by each component's module, after its class. */
export function registerComponent(kind: ComponentKindName, type: ComponentClass): void {
  registered.set(kind, type)
}

/** Whether `value` is an instance of the component class registered as `kind` (false when none is loaded). */
export function isComponent(value: unknown, kind: ComponentKindName): boolean {
  const type = registered.get(kind)
  return type !== undefined && value instanceof type
}

/**
 * Components every exporter reports without being given them, each under a name: the process's follower of a
 * fleet's rule source (docs/readme/fleet.md), which no application code makes. Returns what removes it.
 */
const automatic = new Map<object, string>()

export function reportAutomatically(component: object, name: string): () => void {
  automatic.set(component, name)
  return () => automatic.delete(component)
}

/** The components reported without being given, with their names. */
export function automaticComponents(): ReadonlyMap<object, string> {
  return automatic
}

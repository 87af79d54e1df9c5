// Each component class registers itself here when its module loads. The exporters (bulwark/prometheus,
// bulwark/opentelemetry) recognise a component by the classes registered, so they import no component class: a
// component that exists was loaded, and registered, by whoever made it, through whichever entry.

/** A component kind: its class's name (lib/ops/kinds/component-kinds.ts lists them all). */
export type ComponentKindName = string

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

/** The kinds registered so far, in the order their modules loaded (test/ops/kinds.test.ts compares them with the list). */
export function registeredKinds(): ComponentKindName[] {
  return [...registered.keys()]
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

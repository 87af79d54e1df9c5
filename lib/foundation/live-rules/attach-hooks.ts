// A registry of attach hooks: code that hears when a component with live rules, or a switchboard, attaches to its
// region. A host that follows a fleet's rule source (docs/readme/fleet.md) gives a new region the rule in force this
// way. This layer knows no follower: the public entry points register the one BULWARK_RULES names
// (lib/entries/rules-env.ts), and the fleet's code registers its own hooks when it starts.

/** A component's region, reported when the component attaches to it. */
export interface RegionAttach {
  /** 'rules': a component with live rules; 'switches': a switchboard; 'routing': a GrayRouter. */
  readonly kind: 'rules' | 'switches' | 'routing'
  /** The region's name (`<kind>.<namespace>.<shared>`). */
  readonly region: string
  /** This member made the region: it holds its maker's options, not yet the host's rules. */
  readonly created: boolean
  /**
   * Writes for every member of the region, checked first (throws when it is not valid): a partial rule for 'rules',
   * switch changes (`{ target: mode | null }`) for 'switches', a rule list for 'routing'.
   */
  apply(value: object): void
}

export type AttachHook = (attach: RegionAttach) => void

const hooks = new Set<AttachHook>()

/** Registers `hook`; returns what removes it. */
export function addAttachHook(hook: AttachHook): () => void {
  hooks.add(hook)
  return () => {
    hooks.delete(hook)
  }
}

/** Tells the hooks about a region a component attached to. A hook that throws never fails the component. */
export function regionAttached(
  kind: RegionAttach['kind'],
  region: string,
  created: boolean,
  apply: (value: object) => void,
): void {
  if (hooks.size === 0) return
  const attach: RegionAttach = { kind, region, created, apply }
  // A Set's iteration visits what is added meanwhile: a hook that starts the fleet's follower sees its hooks answer
  // for this very region.
  for (const hook of hooks) {
    try {
      hook(attach)
    } catch {
      // The follower counts what it could not apply; the component keeps its constructor's options.
    }
  }
}

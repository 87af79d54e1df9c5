// How a host that follows a fleet's rule source (docs/readme/fleet.md) gives its rules to a component the moment the
// component makes its region: the components call here, the fleet's follower (lib/ops/fleet) answers. A process
// started with BULWARK_RULES starts its follower here, at its first shared component with live rules or switches:
// no code change to adopt it.
import type { SwitchMode } from '../../components/switches/switch-layout'

/** The environment variable that names a process's rule source. */
export const RULES_ENV = 'BULWARK_RULES'

export interface AttachHooks {
  /** A component with live rules made the region `regionName`; `adopt` writes a rule (checked first) for its members. */
  rules(regionName: string, adopt: (rule: object) => void): void
  /** A switchboard made the region `regionName`; `configure` sets its switches. */
  switches(regionName: string, configure: (changes: Record<string, SwitchMode | null>) => void): void
}

let hooks: AttachHooks | undefined
let envChecked = false

/** Installs (or with undefined, removes) the hooks: the fleet's follower. */
export function setAttachHooks(value: AttachHooks | undefined): void {
  hooks = value
}

/** Never start a follower from the environment in this process (the `bulwark` command line). */
export function ignoreRulesEnv(): void {
  envChecked = true
}

/** The hooks, after starting the follower BULWARK_RULES names, the first time a region is made. */
export function attachHooks(): AttachHooks | undefined {
  if (!envChecked) {
    envChecked = true
    const url = process.env[RULES_ENV]
    if (url !== undefined && url !== '') {
      // Loaded only here (its own pack): a process without BULWARK_RULES never loads the fleet's code.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const fleet = require('../../ops/fleet/follow-env') as typeof import('../../ops/fleet/follow-env') // bulwark:separate
      fleet.followFromEnv(url)
    }
  }
  return hooks
}

/**
 * Tells the hooks about a region a component attached to, when it made it (`created`): an existing region already
 * has the host's rules. A hook that throws never fails the component being made.
 */
export function regionAttached(
  kind: 'rules' | 'switches',
  regionName: string,
  created: boolean,
  apply: (value: never) => void,
): void {
  const h = attachHooks()
  if (h === undefined || !created) return
  try {
    if (kind === 'rules') h.rules(regionName, apply as (rule: object) => void)
    else h.switches(regionName, apply as (changes: Record<string, SwitchMode | null>) => void)
  } catch {
    // The follower counts what it could not apply; the component keeps its constructor's options.
  }
}

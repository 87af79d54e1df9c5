import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { nestRule, type FlatRule, type RuleStats } from '../../foundation/live-rules/live-rules'
import { splitRegionName } from '../../foundation/regions/namespace'
import { listRegions } from '../../foundation/regions/regions'
import { type Attach, attacherOf } from '../top/attach'
import { RegionSnapshot } from '../top/region-snapshot'

export const SET_USAGE = `Usage: bulwark set <component> <field>=<value> ...

Changes the live rule of a shared component for every process of the host (docs/rules/live-rules.md): each
worker obeys within a second, with no restart. <component> is its region name (token-bucket.api) or its
\`shared\` name (api) when only one component has it. Fields you do not name keep their values.

  token-bucket     rate, burst
  sliding-window   limit
  sre              success, minimumCalls
  circuit          failureRatio | slowCallRatio, slowCallDuration | failureCount (by strategy), minimumCalls,
                   openDuration
  bbr              cpuThreshold, cooldown, minInFlight, queueDelay.target, queueDelay.interval
  key-concurrency-limiter   max
  keyed-limiter    rate, burst
  redis-rate-limiter        limit, window, burst (GCRA)

Example: bulwark set bbr.api cpuThreshold=700 queueDelay.target=5`

/** The one region `name` designates among those with live rules. */
function findRegion(name: string): string {
  const regions = listRegions().filter((r) => attacherOf(r) !== undefined)
  // A full region name, `kind.shared`, `namespace/shared` or the `shared` name (docs/guide/trust.md).
  const matches = regions.filter((r) => {
    const { kind, namespace, shared } = splitRegionName(r)
    return r === name || shared === name || `${namespace}/${shared}` === name || `${kind}.${shared}` === name
  })
  if (matches.length === 1) return matches[0]
  const expected =
    matches.length === 0
      ? `a shared component with live rules on this host (${regions.join(', ') || 'none'})`
      : `one component: name one of ${matches.join(', ')}`
  throw new InvalidArgumentError('component', name, expected)
}

/** `field=value` arguments as a rule (values are numbers; validation is the component's). */
export function parseAssignments(args: readonly string[]): Record<string, unknown> {
  if (args.length === 0) throw new InvalidArgumentError('rule', '', 'at least one field=value')
  const flat: FlatRule = {}
  for (const arg of args) {
    const eq = arg.indexOf('=')
    const raw = arg.slice(eq + 1)
    const value = raw.trim() === '' ? NaN : Number(raw)
    if (eq <= 0) throw new InvalidArgumentError('rule', arg, 'field=value')
    if (!Number.isFinite(value)) throw new InvalidArgumentError(arg.slice(0, eq), raw, 'a number')
    flat[arg.slice(0, eq)] = value
  }
  return nestRule(flat)
}

/**
 * `bulwark set`: attaches to the component's region as a member for the moment of the change, changes its rule
 * through the component's own configure() (its validation included) and detaches. Returns the rule now in force.
 */
export function setRule(component: string, args: readonly string[]): { region: string } & RuleStats {
  const rule = parseAssignments(args)
  const region = findRegion(component)
  const attached = (attacherOf(region) as Attach)(new RegionSnapshot(region))
  try {
    return { region, ...attached.configure(rule) }
  } finally {
    attached.close()
  }
}

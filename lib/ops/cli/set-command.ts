import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { nestRule, SHADOW_FIELD, type FlatRule, type RuleStats } from '../../foundation/live-rules/live-rules'
import { defaultNamespace, splitRegionName } from '../../foundation/regions/namespace'
import { listRegions } from '../../foundation/regions/regions'
import { type Attach, attacherOf } from '../top/attach'
import { RegionSnapshot } from '../top/region-snapshot'

export const SET_USAGE = `Usage: bulwark set <component> <field>=<value> ...

Changes the live rule of a shared component for every process of the host (docs/rules/live-rules.md): each
worker obeys within a second, with no restart. <component> is its full region name (token-bucket.<namespace>.api),
<namespace>/api, or, for a component of this command's own application namespace (BULWARK_NAMESPACE, else the
one of the directory it runs from), its \`shared\` name (api) or token-bucket.api. Fields you do not name keep their
values.

  token-bucket     rate, burst
  sliding-window   limit
  sre              success, minimumCalls
  circuit          failureRatio | slowCallRatio, slowCallDuration | failureCount (by strategy), minimumCalls,
                   openDuration
  bbr              cpuThreshold, cooldown, minInFlight, queueDelay.target, queueDelay.interval
  key-concurrency-limiter   max
  keyed-limiter    rate, burst
  redis-rate-limiter        limit, window, burst (GCRA)
  bulkhead         latency.buffer, latency.minLimit, latency.maxLimit, latency.probeInterval
  retry-budget     ratio, minPerSecond

Every one of them also takes shadow=on|off: in shadow mode it counts what it would refuse and admits it
(docs/rules/shadow.md).

Example: bulwark set bbr.api cpuThreshold=700 queueDelay.target=5`

/**
 * Whether `region` is the one `name` designates: its full name or `namespace/shared` anywhere; a bare `shared` name
 * or `kind.shared` only in this command's namespace, so that a short name never changes another application's.
 */
export function designates(region: string, name: string, namespace: string): boolean {
  const r = splitRegionName(region)
  if (region === name || `${r.namespace}/${r.shared}` === name) return true
  return r.namespace === namespace && (r.shared === name || `${r.kind}.${r.shared}` === name)
}

/** The one region `name` designates among those with live rules. */
function findRegion(name: string): string {
  const regions = listRegions().filter((r) => attacherOf(r) !== undefined)
  const namespace = defaultNamespace()
  const matches = regions.filter((r) => designates(r, name, namespace))
  if (matches.length === 1) return matches[0]
  // Elsewhere: the same short name in other applications' namespaces, to be named in full.
  const others = regions.filter((r) => designates(r, name, splitRegionName(r).namespace))
  const expected =
    matches.length > 1
      ? `one component: name one of ${matches.join(', ')}`
      : others.length > 0
        ? `a component of this namespace (${namespace}); others' are named with theirs: ${others.join(', ')}`
        : `a shared component with live rules on this host (${regions.join(', ') || 'none'})`
  throw new InvalidArgumentError('component', name, expected)
}

/** The words `shadow=` takes besides 1 and 0 (docs/rules/shadow.md). */
const SHADOW_VALUES: Record<string, number> = { on: 1, off: 0, true: 1, false: 0 }

const toNumber = (raw: string) => (raw.trim() === '' ? NaN : Number(raw))

/** `field=value` arguments as a rule (values are numbers, `shadow=on|off`; validation is the component's). */
export function parseAssignments(args: readonly string[]): Record<string, unknown> {
  if (args.length === 0) throw new InvalidArgumentError('rule', '', 'at least one field=value')
  const flat: FlatRule = {}
  for (const arg of args) {
    const eq = arg.indexOf('=')
    const raw = arg.slice(eq + 1)
    const value = arg.slice(0, eq) === SHADOW_FIELD && raw in SHADOW_VALUES ? SHADOW_VALUES[raw] : toNumber(raw)
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

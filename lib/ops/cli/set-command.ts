import { BbrLimiter } from '../../components/bbr/bbr-limiter'
import { CircuitBreaker } from '../../components/breakers/circuit-breaker'
import type { CircuitBreakerOptions } from '../../components/breakers/circuit-breaker-options'
import { SreBreaker } from '../../components/breakers/sre-breaker'
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { KeyConcurrencyLimiter } from '../../components/key-limits/key-concurrency-limiter'
import { keyLimitShape } from '../../components/key-limits/key-limit-region'
import { KeyedLimiter } from '../../components/ratelimit/keyed-limiter'
import { keyedLimiterShape } from '../../components/ratelimit/keyed-rate-limits'
import { SlidingWindowLimiter } from '../../components/ratelimit/sliding-window-limiter'
import { TokenBucket } from '../../components/ratelimit/token-bucket'
import { defaultNamespace, splitRegionName } from '../../foundation/regions/namespace'
import { listRegions } from '../../foundation/regions/regions'
import { RegionSnapshot } from '../top/region-snapshot'
import type { RegionKind } from '../kinds/component-kinds'
import { nestRule, type FlatRule, type RuleStats } from '../../foundation/live-rules/live-rules'

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

Example: bulwark set bbr.api cpuThreshold=700 queueDelay.target=5`

/** A component with live rules, attached by its region's fingerprint (the options its members agree on). */
interface Configurable {
  configure(rule: object): RuleStats
  close(): void
}

/** The kinds of region with live rules (ops/kinds lists every kind): how to attach to one as a member. */
const ATTACH: { readonly [K in RegionKind]?: (snapshot: RegionSnapshot) => Configurable } = {
  'token-bucket': (s) =>
    new TokenBucket({
      shared: s.sharedName,
      namespace: s.namespace || undefined, // the region's own application namespace, not this command's
      maxMembers: s.fingerprint.number('lanes'),
      rate: s.fingerprint.number('rate'),
      burst: s.fingerprint.number('burst'),
    }),
  'sliding-window': (s) =>
    new SlidingWindowLimiter({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
      limit: s.fingerprint.number('limit'),
      window: s.fingerprint.number('window'),
      buckets: s.fingerprint.number('buckets'),
    }),
  sre: (s) =>
    new SreBreaker({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
      window: s.fingerprint.number('window'),
      buckets: s.fingerprint.number('buckets'),
      success: s.fingerprint.number('success'),
      minimumCalls: s.fingerprint.number('minimumCalls'),
    }),
  circuit: (s) => {
    const f = s.fingerprint
    return new CircuitBreaker({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: f.number('lanes'),
      window: f.number('window'),
      buckets: f.number('buckets'),
      halfOpenCalls: f.number('half'),
      strategy: f.has('slowCallRatio') ? 'slowCallRatio' : f.has('errorCount') ? 'errorCount' : 'errorRatio',
    } as CircuitBreakerOptions)
  },
  // Its `max` is not in the fingerprint (members may differ until a rule is set): any valid value attaches.
  'key-concurrency-limiter': (s) => {
    const { overflowKeys, ...shape } = keyLimitShape(s.fingerprint)
    const sharing = {
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
    }
    return new KeyConcurrencyLimiter({ ...sharing, ...shape, overflow: overflowKeys, max: 1 })
  },
  'keyed-limiter': (s) => {
    const { overflowKeys, ...shape } = keyedLimiterShape(s.fingerprint)
    const sharing = {
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
    }
    return new KeyedLimiter({ ...sharing, ...shape, overflow: overflowKeys })
  },
  bbr: (s) =>
    new BbrLimiter({
      shared: s.sharedName,
      namespace: s.namespace || undefined,
      maxMembers: s.fingerprint.number('lanes'),
      window: s.fingerprint.number('window'),
      buckets: s.fingerprint.number('buckets'),
    }),
}

type Attach = (snapshot: RegionSnapshot) => Configurable

/** How to attach to region `name`, by its kind; undefined for a kind without live rules. */
function attacherOf(name: string): Attach | undefined {
  const kind = name.slice(0, name.indexOf('.'))
  return Object.hasOwn(ATTACH, kind) ? ATTACH[kind as RegionKind] : undefined
}

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

import { BbrLimiter } from '../../components/bbr/bbr-limiter'
import { CircuitBreaker } from '../../components/breakers/circuit-breaker'
import type { CircuitBreakerOptions } from '../../components/breakers/circuit-breaker-options'
import { SreBreaker } from '../../components/breakers/sre-breaker'
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { KeyConcurrencyLimiter } from '../../components/key-limits/key-concurrency-limiter'
import { keyLimitShape } from '../../components/key-limits/key-limit-region'
import { KeyedLimiter } from '../../components/ratelimit/keyed-limiter'
import { keyedLimiterShape } from '../../components/ratelimit/keyed-rate-limits'
import { openRedisRule, redisRuleFields } from '../../components/ratelimit/redis/redis-rule'
import { SlidingWindowLimiter } from '../../components/ratelimit/sliding-window-limiter'
import { TokenBucket } from '../../components/ratelimit/token-bucket'
import { splitRegionName } from '../../foundation/regions/namespace'
import { listRegions } from '../../foundation/regions/regions'
import { RegionSnapshot } from '../top/region-snapshot'
import { nestRule, type FlatRule, type RuleStats } from '../../foundation/live-rules/live-rules'

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

/** A component with live rules, attached by its region's fingerprint (the options its members agree on). */
export interface Configurable {
  configure(rule: object): RuleStats
  close(): void
}

export const ATTACH: Record<string, (snapshot: RegionSnapshot) => Configurable> = {
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
  // The rule's own region: no Redis client is needed to change it.
  'redis-rate-limiter': (s) => {
    const algorithm = s.fingerprint.has('gcra') ? 'gcra' : 'sliding-window'
    const sharing = { shared: s.sharedName, namespace: s.namespace || undefined, lanes: s.fingerprint.number('lanes') }
    const initial = redisRuleFields(algorithm).map(() => 1)
    const { region, rules } = openRedisRule(sharing, algorithm, initial, 1, () => undefined)
    return { configure: (rule) => rules.configure(rule), close: () => region.close() }
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

/** The one region `name` designates among those with live rules. */
function findRegion(name: string): string {
  const regions = listRegions().filter((r) => ATTACH[r.slice(0, r.indexOf('.'))] !== undefined)
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
  const attached = ATTACH[region.slice(0, region.indexOf('.'))](new RegionSnapshot(region))
  try {
    return { region, ...attached.configure(rule) }
  } finally {
    attached.close()
  }
}

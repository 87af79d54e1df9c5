import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { registerComponent } from '../../foundation/common/component-registry'
import { checkOptions, optionalFunction } from '../../foundation/common/validate'
import { regionAttached } from '../../foundation/live-rules/attach-hooks'
import { resolveSharing, type SharingOptions } from '../../foundation/regions/sharing-options'
import { termMatches } from './request-fields'
import { checkGroups, compileRules, type CompiledRule, type RouteRule, type RuleError, stableHash } from './route-rules'
import { RoutingRegion } from './routing-region'

export type { RouteRule } from './route-rules'

export interface GrayRouterOptions extends Omit<SharingOptions, 'now'> {
  /** The upstream groups the application knows (1-16 names); a rule naming another is refused. */
  groups: readonly string[]
  /** The group of a request no rule matches: one of `groups`. */
  fallback: string
  /**
   * The rules to start with, tried in order. With `shared`, rules the host's region already holds (set by another
   * router, `configure()` or a fleet's rule source) win over these.
   */
  rules?: readonly RouteRule[]
  /** Random source in [0, 1) for a rule's weight when route() is given no key (default Math.random). */
  random?: () => number
}

/** What a router reports (the exporters and `bulwark top` read it). */
export interface GrayRouterStats {
  /** The rules' version: +2 with every change, host-wide when shared. */
  version: number
  rules: number
  /** Requests this router sent to each group. */
  routed: Record<string, number>
  /** Requests every router of the region sent to each group, since the region was made. */
  routedOnHost: Record<string, number>
  /** Rule texts found in the region that did not compile (the router kept its last good rules). */
  refused: number
}

const optionError: RuleError = (field, value, expected) => new InvalidOptionError(field, value, expected)

/**
 * Picks an upstream group for a request by rules such as `header(x-version) = v2 && weight = 30` (docs/readme/
 * integrations.md, "Gray routing"). With `shared`, the rules live in the host's region: `configure()` in any thread
 * or process, or a fleet's rule source (`routing.<shared>`), changes what every router of that name routes, at
 * its next request. Given a key (a user id), a rule's weight sends the same clients to the same group on every host
 * while the rule stands; without one, `random` decides.
 */
export class GrayRouter {
  readonly shared: string | undefined
  /** The groups, in the order the region declared them. */
  readonly groups: readonly string[]
  readonly fallback: string
  private readonly region: RoutingRegion
  private readonly f64: Float64Array
  private readonly lane: number
  private readonly baseline: number[]
  private readonly fallbackIndex: number
  private readonly random: () => number
  private compiled: CompiledRule[] = []
  private current: RouteRule[] = []
  private seen = -1
  private refused = 0

  constructor(options: GrayRouterOptions) {
    const o = checkOptions<GrayRouterOptions>(options, 'options')
    const groups = checkGroups(o.groups, optionError)
    if (typeof o.fallback !== 'string' || !groups.includes(o.fallback))
      throw new InvalidOptionError('fallback', o.fallback, `one of the groups (${groups.join(', ')})`)
    const initial = o.rules === undefined ? [] : compileRules(o.rules, groups, optionError).rules
    this.random = optionalFunction<() => number>('random', o.random) ?? Math.random
    const sharing = resolveSharing(o)
    this.shared = sharing.shared
    this.region = RoutingRegion.open(sharing.shared, sharing.namespace, sharing.lanes)
    this.groups = this.join(groups, initial, o.groups)
    this.fallback = o.fallback
    this.fallbackIndex = this.groups.indexOf(o.fallback)
    this.f64 = this.region.region.f64
    this.lane = this.region.laneIndex(this.region.region.member)
    this.baseline = this.groups.map((_, g) => this.f64[this.lane + g])
    this.refresh()
    const region = this.region.region
    // On a host that follows a rule source, a region just made takes the source's rules for it.
    if (region.name !== undefined)
      regionAttached('routing', region.name, region.created, (rules) => this.configure(rules as RouteRule[]))
  }

  /**
   * The group for `request` (a node or fetch request, undici's dispatch options, or { method, path, headers }): the
   * first rule it matches, else the fallback. `key` (a user id, say) makes a weight's choice stable for that key.
   * Never throws: a request of an odd shape matches no rule.
   */
  route(request: unknown, key?: string | number): string {
    const version = this.region.rulesText.sequence
    if (version !== this.seen) this.reload(version)
    let group = this.fallbackIndex
    if (request !== null && typeof request === 'object') {
      try {
        group = this.pick(request as Record<string, unknown>, key)
      } catch {
        group = this.fallbackIndex // a getter of an exotic request threw
      }
    }
    this.f64[this.lane + group]++
    return this.groups[group]
  }

  /**
   * Replaces the rules (host-wide when shared), checked whole first: an InvalidArgumentError names the bad rule's
   * index, term and value, and nothing changes.
   */
  configure(rules: readonly RouteRule[]): void {
    this.region.writeRules(rules, this.groups)
    this.refresh()
  }

  /** The rules in force. */
  get rules(): RouteRule[] {
    this.refresh()
    return this.current.map((r) => ({ ...r }))
  }

  /** The rules' version: +2 with every change (host-wide when shared). */
  get version(): number {
    return this.region.rulesText.sequence
  }

  stats(): GrayRouterStats {
    this.refresh()
    const host = this.region.totals(this.groups.length)
    const routed: Record<string, number> = {}
    const routedOnHost: Record<string, number> = {}
    this.groups.forEach((group, g) => {
      routed[group] = this.f64[this.lane + g] - this.baseline[g]
      routedOnHost[group] = host[g]
    })
    return { version: this.seen, rules: this.current.length, routed, routedOnHost, refused: this.refused }
  }

  /** Detaches from the region (the rules stay while another router holds it). Idempotent. */
  close(): void {
    this.region.close()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** Takes the region's groups (the same set as `groups`, else refused) and, in a region just made, `initial`. */
  private join(groups: string[], initial: RouteRule[], given: unknown): string[] {
    try {
      const declared = this.region.groups()
      if (declared !== undefined && !sameSet(declared, groups))
        throw new InvalidOptionError(
          'groups',
          given,
          `the groups the host's other routers of '${this.shared}' declared (${declared.join(', ')})`,
        )
      if (declared === undefined) this.region.declareGroups(groups)
      if (!this.region.hasRules) this.region.writeRules(initial, declared ?? groups, optionError)
      return declared ?? groups
    } catch (error) {
      this.region.close()
      throw error
    }
  }

  private refresh(): void {
    const version = this.region.rulesText.sequence
    if (version !== this.seen) this.reload(version)
  }

  private reload(version: number): void {
    if ((version & 1) === 1) return // a writer is mid-way: keep the last rules, look again next time
    const read = this.region.readRules(this.groups)
    if (read === 'busy') return
    this.seen = version
    if (read === 'invalid') {
      this.refused++
      return
    }
    this.seen = read.version
    this.compiled = read.compiled
    this.current = read.rules
  }

  private pick(request: Record<string, unknown>, key: string | number | undefined): number {
    const rules = this.compiled
    for (let r = 0; r < rules.length; r++) {
      const rule = rules[r]
      const terms = rule.terms
      let matched = true
      for (let t = 0; t < terms.length && matched; t++) matched = termMatches(terms[t], request)
      if (!matched || rule.weight === 0) continue
      if (rule.weight === 100) return rule.group
      const roll =
        typeof key === 'string' || typeof key === 'number'
          ? stableHash(typeof key === 'string' ? key : String(key), rule.seed) % 100
          : this.random() * 100
      if (roll < rule.weight) return rule.group
    }
    return this.fallbackIndex
  }
}
registerComponent('GrayRouter', GrayRouter)

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x))
}

// A router's region (docs/readme/integrations.md, "Gray routing"), `routing.<namespace>.<shared>`: the groups its
// routers declared (JSON), the rules in force (JSON, a seqlock text block whose sequence is the rules' version), and
// per member a count of the requests routed to each group. A fleet's watcher writes the rules here without the
// application (lib/ops/fleet/host-applier.ts), checked against the declared groups.
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { type LanePlacement, RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { placeText, TextBlock, type TextPlacement } from '../../foundation/regions/text-block'
import { compileRules, type CompiledRule, ROUTING_LIMITS, type RouteRule, type RuleError } from './route-rules'

export const ROUTING_KIND = 'routing'
/** The rules as JSON: the bound on their text, with room for JSON's quoting. */
const RULES_BYTES = 3 * ROUTING_LIMITS.ruleText + 8 * 1024
const GROUPS_BYTES = 2048

export interface RoutingPlacement {
  layout: RegionLayout
  groups: TextPlacement
  rules: TextPlacement
  /** Per member: requests routed to each group, in the order of the declared groups. */
  counts: LanePlacement
}

export function describeRouting(lanes: number): RoutingPlacement {
  const layout = new RegionLayout(ROUTING_KIND, lanes).describe(`v1 groups=${ROUTING_LIMITS.groups}`)
  const groups = placeText(layout, GROUPS_BYTES)
  const rules = placeText(layout, RULES_BYTES)
  return { layout, groups, rules, counts: layout.lanes64(ROUTING_LIMITS.groups) }
}

/** The rules a region holds, compiled against its groups. */
export interface RegionRules {
  rules: RouteRule[]
  compiled: CompiledRule[]
  version: number
}

/** One member's view of a router's region (or a snapshot's, for `bulwark top`). */
export class RoutingRegion {
  readonly region: SharedRegion
  readonly rulesText: TextBlock
  private readonly groupsText: TextBlock
  private readonly countsBase: number
  private readonly countsStride: number

  constructor(region: SharedRegion, placement: RoutingPlacement) {
    this.region = region
    this.rulesText = new TextBlock(region, placement.rules)
    this.groupsText = new TextBlock(region, placement.groups)
    this.countsBase = (region.base + placement.counts.offset) / 8
    this.countsStride = placement.counts.stride / 8
  }

  static open(shared: string | undefined, namespace: string | undefined, lanes: number): RoutingRegion {
    const placement = describeRouting(lanes)
    return new RoutingRegion(SharedRegion.forComponent(shared, placement.layout, namespace), placement)
  }

  /** The groups the region's routers declared (undefined before the first router wrote them). */
  groups(): string[] | undefined {
    const read = this.groupsText.read()
    if (read === undefined || read.text === '') return undefined
    try {
      const groups: unknown = JSON.parse(read.text)
      return Array.isArray(groups) && groups.every((g) => typeof g === 'string') ? groups : undefined
    } catch {
      return undefined
    }
  }

  declareGroups(groups: readonly string[]): void {
    this.groupsText.write(JSON.stringify(groups))
  }

  /** Whether rules were ever written (a region just made holds none). */
  get hasRules(): boolean {
    return this.rulesText.sequence !== 0
  }

  /**
   * The rules in force, compiled against `groups`: 'busy' when writers kept them changing (look again), 'invalid'
   * when the text does not compile (written by something that skipped the checks: keep the last good rules).
   */
  readRules(groups: readonly string[]): RegionRules | 'busy' | 'invalid' {
    const read = this.rulesText.read()
    if (read === undefined) return 'busy'
    if (read.text === '') return { rules: [], compiled: [], version: read.sequence }
    try {
      return { ...compileRules(JSON.parse(read.text), groups), version: read.sequence }
    } catch {
      return 'invalid'
    }
  }

  /**
   * Checks `rules` against the declared groups (or `groups` when none are declared yet) and writes them for every
   * router of the region: all or nothing, the error naming the rule, the term and the value.
   */
  writeRules(rules: unknown, groups: readonly string[] | undefined, fail?: RuleError): RouteRule[] {
    const declared = this.groups() ?? groups
    if (declared === undefined)
      throw new InvalidArgumentError('rules', rules, 'rules for a router whose groups are declared')
    const checked = compileRules(rules, declared, fail).rules
    if (!this.rulesText.write(JSON.stringify(checked)))
      throw new InvalidArgumentError('rules', rules, 'written: another writer held the lock too long; try again')
    return checked
  }

  /** This member's counts (plain f64 cells in its own lane: one writer). */
  laneIndex(member: number): number {
    return this.countsBase + member * this.countsStride
  }

  /** Requests routed to each group slot, summed over the members that ever had a lane. */
  totals(groups: number, lanes = this.region.laneHighWater()): number[] {
    const totals = new Array<number>(groups).fill(0)
    const f64 = this.region.f64
    for (let m = 0; m < lanes; m++) {
      const at = this.laneIndex(m)
      for (let g = 0; g < groups; g++) totals[g] += f64[at + g]
    }
    return totals
  }

  close(): void {
    this.region.close()
  }
}

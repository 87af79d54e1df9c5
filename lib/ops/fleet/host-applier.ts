import { nestRule, type FlatRule } from '../../foundation/live-rules/live-rules'
import { splitRegionName } from '../../foundation/regions/namespace'
import { listRegions } from '../../foundation/regions/regions'
import type { SwitchMode } from '../../components/switches/switch-layout'
import { Switchboard } from '../../components/switches/switchboard'
import type { RouteRule } from '../../components/routing/route-rules'
import { ROUTING_KIND, RoutingRegion } from '../../components/routing/routing-region'
import { type Attach, attacherOf } from '../top/attach'
import { inspectRegion } from '../top/inspect'
import { RegionSnapshot } from '../top/region-snapshot'
import { entryFor, entryRule, type HostRules } from './host-rules'

/** A rule or switch the host could not apply (the rest was applied). */
export interface Refusal {
  /** The component's name in the document (`bbr.api`), `switches.<board>` or `routing.<router>`. */
  component: string
  /** The host's region it was for. */
  region: string
  reason: string
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * Makes the host's regions obey host rules (docs/readme/fleet.md): each rule written to the regions it names with
 * the component's own configure() (attached for the moment, as `bulwark set` does), each switch to its board. A
 * region already holding the values is left as it is, so applying the same rules again changes no version.
 */
export class HostApplier {
  /** Regions of this namespace already given the rules in force. */
  private seen = new Set<string>()

  constructor(private readonly namespace: string) {}

  /**
   * Applies `next` to every region: with `all`, every rule and switch; otherwise those that differ from `previous`
   * (what the host obeyed). Switches `previous` had and `next` has not are cleared.
   */
  apply(previous: HostRules, next: HostRules, all: boolean): Refusal[] {
    const refusals: Refusal[] = []
    const regions = listRegions({ namespace: this.namespace })
    this.seen = new Set(regions)
    for (const region of regions) {
      const { kind, shared } = splitRegionName(region)
      if (kind === 'switches') {
        this.applyBoard(region, shared, previous.switches[shared] ?? {}, next.switches[shared] ?? {}, all, refusals)
        continue
      }
      if (kind === ROUTING_KIND) {
        this.applyRouting(region, shared, previous.routing?.[shared], next.routing?.[shared], all, refusals)
        continue
      }
      const attach = attacherOf(region)
      if (attach === undefined) continue
      const rule = entryRule(entryFor(next, kind, shared))
      if (rule === undefined) continue
      if (!all && same(rule, entryRule(entryFor(previous, kind, shared)))) continue
      this.applyRule(region, attach, `${kind}.${shared}`, rule, refusals)
    }
    return refusals
  }

  /** Gives the rules in force to the regions made since the last look (by processes that do not follow the source). */
  reconcile(rules: HostRules): Refusal[] {
    const refusals: Refusal[] = []
    const regions = listRegions({ namespace: this.namespace })
    const fresh = regions.filter((r) => !this.seen.has(r))
    this.seen = new Set(regions)
    for (const region of fresh) {
      const { kind, shared } = splitRegionName(region)
      if (kind === 'switches') this.applyBoard(region, shared, {}, rules.switches[shared] ?? {}, true, refusals)
      else if (kind === ROUTING_KIND)
        this.applyRouting(region, shared, undefined, rules.routing?.[shared], true, refusals)
      else {
        const attach = attacherOf(region)
        const rule = entryRule(entryFor(rules, kind, shared))
        if (attach !== undefined && rule !== undefined)
          this.applyRule(region, attach, `${kind}.${shared}`, rule, refusals)
      }
    }
    return refusals
  }

  private applyRule(region: string, attach: Attach, component: string, rules: FlatRule, refusals: Refusal[]): void {
    try {
      const view = inspectRegion(region, 0)?.view
      const inForce = view !== undefined && 'rules' in view ? view.rules : undefined
      const current: FlatRule | undefined = inForce && { ...inForce.values, shadow: inForce.shadow?.enabled ? 1 : 0 }
      if (current !== undefined && Object.entries(rules).every(([field, value]) => current[field] === value)) return
      const attached = attach(new RegionSnapshot(region))
      try {
        attached.configure(nestRule(rules))
      } finally {
        attached.close()
      }
    } catch (error) {
      refusals.push({ component, region, reason: message(error) })
    }
  }

  /**
   * Writes a router's rules to its region, checked against the groups its routers declared. A router the rules no
   * longer name gets none (every request to its fallback): what it had before the source named it is gone.
   */
  private applyRouting(
    region: string,
    router: string,
    previous: RouteRule[] | undefined,
    next: RouteRule[] | undefined,
    all: boolean,
    refusals: Refusal[],
  ): void {
    const rules = next ?? (previous === undefined ? undefined : [])
    if (rules === undefined || (!all && same(rules, previous))) return
    try {
      const lanes = new RegionSnapshot(region).fingerprint.number('lanes')
      const routing = RoutingRegion.open(router, this.namespace, lanes)
      try {
        if (routing.rulesText.read()?.text !== JSON.stringify(rules)) routing.writeRules(rules, undefined)
      } finally {
        routing.close()
      }
    } catch (error) {
      refusals.push({ component: `routing.${router}`, region, reason: message(error) })
    }
  }

  private applyBoard(
    region: string,
    board: string,
    previous: Record<string, SwitchMode>,
    next: Record<string, SwitchMode>,
    all: boolean,
    refusals: Refusal[],
  ): void {
    const changes: Record<string, SwitchMode | null> = {}
    for (const [target, mode] of Object.entries(next)) if (all || previous[target] !== mode) changes[target] = mode
    for (const target of Object.keys(previous)) if (next[target] === undefined) changes[target] = null
    if (Object.keys(changes).length === 0) return
    try {
      const switchboard = new Switchboard({ shared: board, namespace: this.namespace })
      try {
        const now = new Map(switchboard.list().map((s) => [s.target, s.mode]))
        const needed = Object.entries(changes).filter(([target, mode]) => (now.get(target) ?? null) !== mode)
        if (needed.length > 0) switchboard.configure(Object.fromEntries(needed))
      } finally {
        switchboard.close()
      }
    } catch (error) {
      refusals.push({ component: `switches.${board}`, region, reason: message(error) })
    }
  }
}

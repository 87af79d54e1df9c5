import { describeRouting, RoutingRegion } from '../../../components/routing/routing-region'
import type { RegionSnapshot } from '../region-snapshot'
import type { RoutingView } from '../views'

/** A gray router's region: its rules and their version, and the requests routed to each group host-wide. */
export function inspectRouting(snapshot: RegionSnapshot): RoutingView {
  const placement = describeRouting(snapshot.fingerprint.number('lanes'))
  const routing = new RoutingRegion(snapshot.region(placement.layout), placement)
  const groups = routing.groups() ?? []
  const read = routing.readRules(groups)
  const totals = routing.totals(groups.length, snapshot.memberCapacity)
  return {
    type: 'routing',
    version: routing.rulesText.sequence,
    routes: typeof read === 'string' ? [] : read.rules,
    unreadable: typeof read === 'string',
    groups: groups.map((group, g) => ({ group, routed: totals[g] })),
  }
}

import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { defaultNamespace, splitRegionName } from '../../foundation/regions/namespace'
import { listRegions } from '../../foundation/regions/regions'
import { ROUTING_KIND, RoutingRegion } from '../../components/routing/routing-region'
import { RegionSnapshot } from '../top/region-snapshot'
import { designates } from './set-command'

export const ROUTING_USAGE = `Usage: bulwark set routing.<router> '<rules as JSON>'

Replaces a gray router's rules (docs/guide/integrations.md, "Gray routing") for every process of the host that has
it, at its next request: [{"when": "header(x-version) = v2 && weight = 30", "group": "v2"}, ...], tried in order,
checked whole against the groups its routers declared. '[]' sends every request to the router's fallback.`

/** `bulwark set routing.<router> '<json>'`: a host's router, as `bulwark set --source` does for the fleet. */
export function setRoutingHere(args: readonly string[], out: (text: string) => void): number {
  const [name, ...rest] = args
  const text = rest.join(' ')
  let rules: unknown
  try {
    rules = JSON.parse(text)
  } catch {
    throw new InvalidArgumentError(name, text, `the rules as JSON\n\n${ROUTING_USAGE}`)
  }
  const routers = listRegions().filter((r) => splitRegionName(r).kind === ROUTING_KIND)
  const found = routers.filter((r) => designates(r, name, defaultNamespace()))
  if (found.length !== 1) {
    out(
      found.length > 1
        ? `bulwark set: '${name}' names several routers: name one of ${found.join(', ')}\n`
        : `bulwark set: no process of this host has the router '${name}' (bulwark top lists them)\n`,
    )
    return 1
  }
  const { namespace, shared } = splitRegionName(found[0])
  const lanes = new RegionSnapshot(found[0]).fingerprint.number('lanes')
  const routing = RoutingRegion.open(shared, namespace || undefined, lanes)
  try {
    const written = routing.writeRules(rules, undefined)
    out(`${name}: ${written.length} rules, version ${routing.rulesText.sequence}\n`)
    return 0
  } finally {
    routing.close()
  }
}

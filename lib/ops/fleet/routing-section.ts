// The routing section of a rule document (docs/readme/fleet.md, "Gray routing"): gray routers by their shared name,
// each with its rules in order. A host checks the groups a rule names against those its router declared
// (lib/ops/fleet/host-applier.ts); here every rule is parsed as the router parses it, and the section is bounded.
import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { compileRules, type RouteRule } from '../../components/routing/route-rules'

/** A gray router's entry: its rules, tried in order. */
export interface RoutingEntry {
  rules: RouteRule[]
}

/** Routers a document routes for at most. */
export const MAX_ROUTERS = 100

const routerName = /^[A-Za-z0-9._-]{1,120}$/
const reserved = new Set(Object.getOwnPropertyNames(Object.prototype))

/** Checks one router's entry; the error names the field where it sits in the document (`routing.api.rules[2].when`). */
export function checkRouter(router: string, value: unknown, path = `routing.${router}`): RoutingEntry {
  if (!routerName.test(router) || reserved.has(router))
    throw new InvalidArgumentError(path, router, 'a router name (its shared name)')
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidArgumentError(path, value, '{ rules: [{ when, group }] }')
  const entry = value as Record<string, unknown>
  for (const key of Object.keys(entry))
    if (key !== 'rules') throw new InvalidArgumentError(`${path}.${key}`, entry[key], 'absent (an entry has rules)')
  const fail = (field: string, bad: unknown, expected: string) =>
    new InvalidArgumentError(`${path}.${field}`, bad, expected)
  return { rules: compileRules(entry.rules, undefined, fail).rules }
}

/** Checks a routing section (the document's, or its canary's). */
export function checkRouting(path: string, value: unknown): Record<string, RoutingEntry> {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length > MAX_ROUTERS)
    throw new InvalidArgumentError(path, value, `an object of at most ${MAX_ROUTERS} routers`)
  const checked: Record<string, RoutingEntry> = {}
  for (const [router, entry] of Object.entries(value)) checked[router] = checkRouter(router, entry, `${path}.${router}`)
  return checked
}

// Gray routing in undiciGuard (docs/readme/integrations.md, "Gray routing"): a GrayRouter picks each request's group
// and the request goes to that group's origin, whose breaker, bulkhead and quota then apply. The router reads the
// dispatch options themselves (method, path, headers in any of undici's shapes).
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions, optionalFunction } from '../../foundation/common/validate'

/** What routes a request: a GrayRouter, or anything that picks a group name for undici's dispatch options. */
export interface RequestRouter {
  route(request: unknown, key?: string | number): string
  readonly groups?: readonly string[]
}

export interface UndiciRouting<O = unknown> {
  router: RequestRouter
  /** Each group's origin (`http://host:port`): a request routed to a group goes there. */
  origins: Record<string, string>
  /** The key that keeps a client in its group (a header's value, say); undefined: the router's random draw. */
  key?: (options: O) => string | number | undefined
}

/** Checks the routing option; returns what gives a request's dispatch options their group's origin. */
export function resolveRouting<O extends { origin?: unknown }>(value: unknown): ((opts: O) => O) | undefined {
  if (value === undefined) return undefined
  const o = checkOptions<UndiciRouting<O>>(value, 'routing')
  const router = o.router
  if (router === null || typeof router !== 'object' || typeof router.route !== 'function')
    throw new InvalidOptionError('routing.router', router, 'a GrayRouter')
  const key = optionalFunction<(options: O) => string | number | undefined>('routing.key', o.key)
  if (o.origins === null || typeof o.origins !== 'object')
    throw new InvalidOptionError('routing.origins', o.origins, 'an object of group name to origin')
  const origins = new Map<string, string>()
  for (const [group, url] of Object.entries(o.origins)) {
    let origin: string | undefined
    try {
      origin = typeof url === 'string' ? new URL(url).origin : undefined
    } catch {
      origin = undefined
    }
    if (origin === undefined || origin === 'null')
      throw new InvalidOptionError(`routing.origins.${group}`, url, 'an origin such as http://host:port')
    origins.set(group, origin)
  }
  const missing = (router.groups ?? []).filter((g) => !origins.has(g))
  if (missing.length > 0)
    throw new InvalidOptionError(
      'routing.origins',
      o.origins,
      `an origin for every group (missing: ${missing.join(', ')})`,
    )
  return (opts) => {
    let k: string | number | undefined
    try {
      k = key?.(opts)
    } catch {
      k = undefined // the application's key function failed: the request still goes somewhere
    }
    const origin = origins.get(router.route(opts, k))
    return origin === undefined || origin === opts.origin ? opts : { ...opts, origin }
  }
}

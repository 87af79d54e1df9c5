// The inbound guard's gateway options (docs/guide/gateway.md): per-route policy, allow and deny lists, bans, and the
// readiness answer. Each is made only when given, so that a guard without them pays one `undefined` test each.
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions } from '../../foundation/common/validate'
import { type AccessOptions, AccessScreen, type BanOptions } from './access-screen'
import type { AccessList } from '../../components/access/access-list'
import type { RequestAccess } from './inbound-guard-types'
import type { ResolvedInboundOptions } from './inbound-options'
import { Readiness, type ReadinessOptions } from './readiness'
import type { RequestGate } from './request-gate'
import { RouteTable, type RouteTableOptions } from './route-table'

export interface GatewayOptions<Req> {
  /**
   * Per-route policy (docs/guide/gateway.md, "Routes"): `'GET /users/:id'` or `'/search'` (any method) to what the
   * route declares (`priority`, `rateLimit`, `keyConcurrency`, `concurrency`, `fallback`, `timeout`), or 'skip'.
   * Matched once per request; a request of no declared route gets the guard's own settings.
   */
  routes?: RouteTableOptions<Req>
  /** Allow and deny entries: an AccessList, or `{ list, key }` to match its `key:` entries too. */
  access?: AccessList | AccessOptions<Req>
  /** Bans for refusals that come too fast: a BanList's options (or `list`), and the key they count against. */
  bans?: BanOptions<Req>
  /**
   * The guard answers `path` (default '/ready') itself, before any check: 200 while the host is ready, 503 once it
   * has shed for a while (docs/guide/gateway.md, "Readiness"). Not for gRPC: use `guard.readiness.ready()`.
   */
  readiness?: true | (ReadinessOptions & { path?: string })
}

export interface ResolvedGateway<Req> {
  table: RouteTable<Req> | undefined
  screen: AccessScreen<Req> | undefined
  readiness: Readiness | undefined
  /** The path the guard answers with its readiness (undefined: none). */
  probePath: string | undefined
}

function resolveReadiness(
  value: unknown,
  limiter: ResolvedInboundOptions<unknown>['limiter'],
): { readiness: Readiness | undefined; path: string | undefined } {
  if (value === undefined) return { readiness: undefined, path: undefined }
  const o = checkOptions<ReadinessOptions & { path?: string }>(value === true ? {} : value, 'readiness')
  const { path = '/ready', ...rest } = o
  if (typeof path !== 'string' || !/^\/[^\s?#]*$/.test(path))
    throw new InvalidOptionError('readiness.path', path, 'a path, such as /ready')
  return { readiness: new Readiness({ ...rest, limiter: rest.limiter ?? limiter }), path }
}

/**
 * Makes what the gateway options ask for. `routed`: the adapter reads its framework's matched route (a table is
 * made even without `routes`). Closes what it made when an option is bad.
 */
export function resolveGateway<Req>(
  options: GatewayOptions<Req>,
  o: ResolvedInboundOptions<Req>,
  gate: RequestGate<Req> | undefined,
  access: RequestAccess<Req>,
): ResolvedGateway<Req> {
  let table: RouteTable<Req> | undefined
  let screen: AccessScreen<Req> | undefined
  try {
    if (options.routes !== undefined || access.route !== undefined)
      table = new RouteTable<Req>(options.routes, o, gate, access)
    screen = AccessScreen.of<Req>(options.access, options.bans, o.rateLimit?.key, access)
    const { readiness, path } = resolveReadiness(options.readiness, o.limiter)
    return { table, screen, readiness, probePath: path }
  } catch (error) {
    table?.close()
    screen?.close()
    throw error
  }
}

/** Whether `url` (path and query) is the readiness path. */
export function isProbe(url: unknown, path: string): boolean {
  if (typeof url !== 'string' || !url.startsWith(path)) return false
  return url.length === path.length || url.charCodeAt(path.length) === 63 // '?'
}

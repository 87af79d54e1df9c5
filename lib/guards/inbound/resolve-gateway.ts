// Makes what the inbound guard's gateway options ask for (docs/guide/gateway.md): the route table, the access list
// and bans, the readiness answer. Each is made only when given, so that a guard without them pays one `undefined`
// test each.
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions } from '../../foundation/common/validate'
import { AccessScreen } from './access-screen'
import type { GatewayOptions } from './gateway-options'
import type { RequestAccess } from './inbound-guard-types'
import type { ResolvedInboundOptions } from './inbound-options'
import { Readiness, type ReadinessOptions } from './readiness'
import type { RequestGate } from './request-gate'
import { RouteTable } from './route-table'

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

import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkOptions } from '../../foundation/common/validate'
import { type ResolvedDegrade, timeoutFor } from './degrade-options'
import type { Fallback, FallbackReason } from './fallback'
import type { RequestAccess } from './inbound-guard-types'
import type { ResolvedInboundOptions } from './inbound-options'
import type { RequestGate } from './request-gate'
import { RouteMatcher } from './route-matcher'
import type { RouteTableOptions } from './gateway-options'
import { RouteRule } from './route-rule'

/** Where a framework keeps a matched route's definition (Fastify: its route's `config`, with `bulwark` in it). */
export interface FrameworkRoute {
  url?: unknown
  method?: unknown
  bulwark?: unknown
}

const RULE = Symbol('bulwark.routeRule')
const METHOD = /^[A-Z]+$/

/**
 * The guard's per-route policy (docs/guide/gateway.md, "Routes"): each request is matched once, by a compiled
 * matcher over its method and path (or read from its framework's matched route), and gets its route's rule; a
 * request of no declared route gets the guard's own settings. One table per guard, however many routes.
 */
export class RouteTable<Req> {
  /** Every rule, the guard's own first (index 0). */
  readonly rules: RouteRule<Req>[]
  declare readonly defaults: RouteRule<Req>
  /** Whether some route counts its own concurrency, so that a token must say which rule gave it. */
  declare private ownKeys: boolean
  declare private readonly matcher: RouteMatcher<RouteRule<Req>>
  declare private readonly access: RequestAccess<Req>
  declare private readonly o: ResolvedInboundOptions<Req>
  private lastRequest: unknown = undefined
  private lastRule: RouteRule<Req> | undefined = undefined

  constructor(
    value: unknown,
    o: ResolvedInboundOptions<Req>,
    gate: RequestGate<Req> | undefined,
    access: RequestAccess<Req>,
  ) {
    this.o = o
    this.access = access
    this.defaults = RouteRule.defaults(o, gate)
    this.rules = [this.defaults]
    this.matcher = new RouteMatcher<RouteRule<Req>>()
    this.ownKeys = false
    const routes = value === undefined ? {} : checkOptions<RouteTableOptions<Req>>(value, 'routes')
    try {
      for (const [name, policy] of Object.entries(routes)) {
        const field = `routes.${name}`
        const space = name.indexOf(' ')
        const method = space < 0 ? undefined : name.slice(0, space)
        if (method !== undefined && !METHOD.test(method))
          throw new InvalidOptionError(field, name, "'METHOD /path' (upper case) or '/path'")
        const rule = this.add(name, policy, field)
        this.matcher.add(method, space < 0 ? name : name.slice(space + 1), rule, field)
      }
    } catch (error) {
      this.close()
      throw error
    }
  }

  /** Whether the guard must wrap its tokens: some route holds a concurrency limit of its own, or may (a framework's). */
  get wrapsTokens(): boolean {
    return this.ownKeys || this.access.route !== undefined
  }

  /** Hot path: the rule of `request`'s route (the guard's own when none is declared). Never throws or allocates. */
  match(request: Req): RouteRule<Req> {
    const framework = this.access.route
    let rule: RouteRule<Req> | undefined
    if (framework !== undefined) {
      // The framework's route declares its own policy (Fastify's `config: { bulwark }`): it decides.
      const route = framework(request) as (FrameworkRoute & { [RULE]?: RouteRule<Req> }) | undefined
      if (route !== undefined && route.bulwark !== undefined) rule = route[RULE] ?? this.declare(route)
    }
    if (rule === undefined && this.matcher.size > 0)
      rule = this.matcher.match(this.access.method?.(request), this.access.url?.(request))
    rule ??= this.defaults
    this.lastRequest = request
    this.lastRule = rule
    return rule
  }

  /** The route `request` matched last (answers, timeouts) or matches now. */
  ruleOf(request: Req): RouteRule<Req> {
    return request === this.lastRequest ? (this.lastRule as RouteRule<Req>) : this.match(request)
  }

  /** The route's name (`'GET /users/:id'`), '' for none: the guard's `route` for switches when it has none. */
  readonly nameOf = (request: Req): string => this.ruleOf(request).name

  /**
   * The policy a framework's route definition declares (Fastify's `config: { bulwark }`), compiled once and kept on
   * the definition. `url` and `method` (default: the definition's own) name it.
   */
  declare(route: FrameworkRoute, url: unknown = route.url, method: unknown = route.method): RouteRule<Req> {
    const existing = (route as { [RULE]?: RouteRule<Req> })[RULE]
    if (existing !== undefined) return existing
    const name = `${typeof method === 'string' ? method : '*'} ${String(url)}`
    const rule = this.add(name, route.bulwark, `config.bulwark of ${name}`)
    // Enumerable, so that a copy of the definition (Fastify spreads a route's config) keeps it.
    Object.defineProperty(route, RULE, { value: rule, enumerable: true })
    return rule
  }

  /** The guard's degrade settings with each route's own fallback and timeout in front of them. */
  degrade(base: ResolvedDegrade<Req>): ResolvedDegrade<Req> {
    // A framework's routes are declared later (Fastify's, as they are registered): any of them may have its own.
    const open = this.access.route !== undefined
    const withFallback = open || base.fallback !== undefined || this.rules.some((r) => r.fallback !== undefined)
    const withTimeout = open || base.timeout !== 0 || this.rules.some((r) => r.timeout !== undefined)
    const fallback: Fallback<Req> = (request: Req, reason: FallbackReason) => {
      const own = this.ruleOf(request).fallback
      const chosen = own === undefined ? base.fallback : own === false ? undefined : own
      return chosen?.(request, reason)
    }
    const timeout = (request: Req): number => {
      const own = this.ruleOf(request).timeout
      return timeoutFor(own === undefined ? base.timeout : own, request)
    }
    return {
      deadline: base.deadline,
      fallback: withFallback ? fallback : undefined,
      timeout: withTimeout ? timeout : 0,
    }
  }

  close(): void {
    for (const rule of this.rules) if (rule.ownsKeys) rule.keys?.close()
  }

  private add(name: string, policy: unknown, field: string): RouteRule<Req> {
    const rule = RouteRule.resolve<Req>(name, this.rules.length, policy, field, this.o, this.defaults, this.access)
    this.rules.push(rule)
    if (rule.ownsKeys) this.ownKeys = true
    return rule
  }
}

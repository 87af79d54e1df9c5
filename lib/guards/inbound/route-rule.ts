// One route's policy, as the guard applies it (docs/guide/gateway.md, "Routes"): what it declares replaces the
// guard's own setting, and what it leaves out is the guard's.
import { Priority, type PriorityName } from '../../admission/priority'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { checkNumber, checkOptions, optionalFunction } from '../../foundation/common/validate'
import { resolveTimeout } from './degrade-options'
import type { Fallback } from './fallback'
import type { RequestAccess } from './inbound-guard-types'
import type { RoutePolicy } from './gateway-options'
import { resolveRateLimit, type ResolvedInboundOptions } from './inbound-options'
import { KeyConcurrencyPort } from './key-concurrency-port'
import { RequestGate } from './request-gate'

/** A route's policy resolved: its admission settings, and where its degraded answers come from. */
export class RouteRule<Req> {
  /** `skip`: requests of this route pass untouched. */
  declare readonly skip: boolean
  /** A fixed class (0-3), or -1: ask `priorityOf`, else the guard's default. */
  declare readonly priority: number
  declare readonly priorityOf: ((request: Req) => unknown) | undefined
  declare readonly gate: RequestGate<Req> | undefined
  declare readonly keys: KeyConcurrencyPort<Req> | undefined
  /** undefined: the guard's; false: none. */
  declare readonly fallback: Fallback<Req> | false | undefined
  /** undefined: the guard's; 0: none. */
  declare readonly timeout: number | ((request: Req) => number | undefined) | undefined
  /** Whether this rule made `keys` (closed with the guard). */
  declare readonly ownsKeys: boolean

  constructor(
    readonly name: string,
    readonly index: number,
    fields: {
      skip: boolean
      priority: number
      priorityOf: ((request: Req) => unknown) | undefined
      gate: RequestGate<Req> | undefined
      keys: KeyConcurrencyPort<Req> | undefined
      fallback: Fallback<Req> | false | undefined
      timeout: number | ((request: Req) => number | undefined) | undefined
      ownsKeys: boolean
    },
  ) {
    this.skip = fields.skip
    this.priority = fields.priority
    this.priorityOf = fields.priorityOf
    this.gate = fields.gate
    this.keys = fields.keys
    this.fallback = fields.fallback
    this.timeout = fields.timeout
    this.ownsKeys = fields.ownsKeys
  }

  /** The guard's own settings as a rule: what a request of no declared route gets. */
  static defaults<Req>(o: ResolvedInboundOptions<Req>, gate: RequestGate<Req> | undefined): RouteRule<Req> {
    return new RouteRule<Req>('', 0, {
      skip: false,
      priority: -1,
      priorityOf: o.priority,
      gate,
      keys: o.keyConcurrency,
      fallback: undefined,
      timeout: undefined,
      ownsKeys: false,
    })
  }

  /** Resolves `value` (a RoutePolicy, or 'skip') for route `name` over the guard's `defaults`; `field` names it. */
  static resolve<Req>(
    name: string,
    index: number,
    value: unknown,
    field: string,
    o: ResolvedInboundOptions<Req>,
    defaults: RouteRule<Req>,
    access: RequestAccess<Req>,
  ): RouteRule<Req> {
    const p = checkOptions<RoutePolicy<Req>>(value === 'skip' ? { skip: true } : value, field)
    const known = ['skip', 'priority', 'rateLimit', 'keyConcurrency', 'concurrency', 'fallback', 'timeout']
    for (const key of Object.keys(p))
      if (!known.includes(key)) throw new InvalidOptionError(`${field}.${key}`, p[key as never], known.join(', '))
    if (p.skip !== undefined && typeof p.skip !== 'boolean')
      throw new InvalidOptionError(`${field}.skip`, p.skip, 'a boolean')
    const [priority, priorityOf] = resolvePriority<Req>(p.priority, `${field}.priority`)
    const fallback = p.fallback === false ? false : optionalFunction<Fallback<Req>>(`${field}.fallback`, p.fallback)
    const timeout =
      p.timeout === false ? 0 : p.timeout === undefined ? undefined : resolveTimeout<Req>(p.timeout, `${field}.timeout`)
    let gate = defaults.gate
    if (p.rateLimit !== undefined) {
      const rateLimit = p.rateLimit === false ? undefined : resolveRateLimit<Req>(p.rateLimit, `${field}.rateLimit`)
      gate = RequestGate.of({ ...o, rateLimit }, access, name)
    }
    const keys = resolveKeys<Req>(p, field, name)
    return new RouteRule<Req>(name, index, {
      skip: p.skip === true,
      priority,
      priorityOf,
      gate,
      keys: keys === undefined ? defaults.keys : keys === false ? undefined : keys,
      fallback,
      timeout,
      ownsKeys: keys !== undefined && keys !== false,
    })
  }
}

function resolvePriority<Req>(value: unknown, field: string): [number, ((request: Req) => unknown) | undefined] {
  if (value === undefined) return [-1, undefined]
  if (typeof value === 'function') return [-1, value as (request: Req) => unknown]
  if (typeof value === 'string' && Object.hasOwn(Priority, value)) return [Priority[value as PriorityName], undefined]
  if (value === 0 || value === 1 || value === 2 || value === 3) return [value, undefined]
  throw new InvalidOptionError(field, value, 'critical, high, normal or low (or 0-3), or a function of the request')
}

function resolveKeys<Req>(
  p: RoutePolicy<Req>,
  field: string,
  name: string,
): KeyConcurrencyPort<Req> | false | undefined {
  if (p.concurrency !== undefined) {
    if (p.keyConcurrency !== undefined)
      throw new InvalidOptionError(`${field}.concurrency`, p.concurrency, 'left out beside keyConcurrency')
    const max = checkNumber(`${field}.concurrency`, p.concurrency, { integer: true, min: 1 })
    return new KeyConcurrencyPort<Req>({ max, key: () => name }, `${field}.concurrency`)
  }
  if (p.keyConcurrency === false) return false
  if (p.keyConcurrency === undefined) return undefined
  return new KeyConcurrencyPort<Req>(p.keyConcurrency, `${field}.keyConcurrency`)
}

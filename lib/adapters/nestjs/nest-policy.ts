import { InvalidArgumentError } from '../../foundation/errors/invalid-argument-error'
import { checkNumber, checkOptions } from '../../foundation/common/validate'
import { PRIORITY_NAMES, type PriorityName } from '../../admission/priority'

/** A controller's or a route handler's own terms with the guard (the handler's fields win over its controller's). */
export interface NestRoutePolicy {
  /** The class of the route's requests (a header the guard trusts may still lower it: docs/guide/trust.md). */
  priority?: PriorityName
  /** ms the handler has to answer before the guard answers in its place (0: none); needs the interceptor. */
  timeout?: number
  /** The guard lets the route's requests through untouched: no admission, no timeout. */
  skip?: boolean
}

// Keyed by the handler function or the controller class, as Nest's own metadata is: no reflect-metadata needed.
const policies = new WeakMap<object, NestRoutePolicy>()

function checkPolicy(value: unknown): NestRoutePolicy {
  const o = checkOptions<NestRoutePolicy>(value, 'policy')
  for (const key of Object.keys(o)) {
    if (key !== 'priority' && key !== 'timeout' && key !== 'skip')
      throw new InvalidArgumentError(`policy.${key}`, o[key as keyof NestRoutePolicy], 'priority, timeout or skip')
  }
  if (o.priority !== undefined && !PRIORITY_NAMES.includes(o.priority))
    throw new InvalidArgumentError('policy.priority', o.priority, `one of ${PRIORITY_NAMES.join(', ')}`)
  if (o.timeout !== undefined) checkNumber('policy.timeout', o.timeout, { integer: true, min: 0, max: 3_600_000 })
  if (o.skip !== undefined && typeof o.skip !== 'boolean')
    throw new InvalidArgumentError('policy.skip', o.skip, 'a boolean')
  return Object.freeze({ ...o })
}

/**
 * A decorator for a controller class or a route handler: its priority, its timeout, or `skip` (NestJS's
 * `@nestjs/throttler` has `@Throttle()` and `@SkipThrottle()`; these are the guard's).
 *
 *   @GuardPolicy({ priority: 'critical' }) @Get('health') health() { ... }
 */
export function GuardPolicy(policy: NestRoutePolicy): ClassDecorator & MethodDecorator {
  const checked = checkPolicy(policy)
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    policies.set(descriptor === undefined ? target : (descriptor.value as object), checked)
  }
}

/** `@GuardPolicy({ skip: true })`: the guard lets the route (or the whole controller) through untouched. */
export function SkipGuard(): ClassDecorator & MethodDecorator {
  return GuardPolicy({ skip: true })
}

/** The policy of a route: its handler's fields over its controller's; undefined when neither has one. */
export function policyOf(handler: object, controller: object): NestRoutePolicy | undefined {
  const own = policies.get(handler)
  const inherited = policies.get(controller)
  if (own === undefined || inherited === undefined) return own ?? inherited
  return { ...inherited, ...own }
}

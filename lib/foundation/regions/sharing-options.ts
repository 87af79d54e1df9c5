import type { Clock } from '../signals/clock'
import { checkSharedName, optionalFunction, optionalNumber } from '../common/validate'
import { checkNamespace, defaultNamespace } from './namespace'
import { DEFAULT_MEMBER_CAPACITY } from './shared-region'

/**
 * The options every component takes about where its state lives and what clock it reads (docs/vocabulary.md):
 * each component's options extend it.
 */
export interface SharingOptions {
  /** One component for every thread and process of the host that uses this name (default: local to the thread). */
  shared?: string
  /**
   * Which application `shared` belongs to (default: BULWARK_NAMESPACE, else derived from the application's root
   * directory): components share only with those of the same namespace and name (docs/guide/trust.md).
   */
  namespace?: string
  /** Attachments a shared component accepts (threads x instances across the host; default 64). */
  maxMembers?: number
  /**
   * Monotonic clock in ms (default: the coarse clock; durations that a component measures itself, such as response
   * times, use the precise clock unless this is given).
   */
  now?: Clock
}

export interface ResolvedSharing {
  shared: string | undefined
  /** The application namespace of `shared` (docs/guide/trust.md); undefined when not shared. */
  namespace: string | undefined
  maxMembers: number
  /** The injected clock, if any (components choose their default). */
  now: Clock | undefined
  /** Lanes a layout needs: the member capacity when shared, 1 when local. */
  lanes: number
}

/** Validates `shared`, `namespace`, `maxMembers` and `now`, once for every component. */
export function resolveSharing(o: {
  shared?: unknown
  namespace?: unknown
  maxMembers?: unknown
  now?: unknown
}): ResolvedSharing {
  const shared = o.shared === undefined ? undefined : checkSharedName('shared', o.shared)
  const given = o.namespace === undefined ? undefined : checkNamespace('namespace', o.namespace)
  const namespace = shared === undefined ? undefined : (given ?? defaultNamespace())
  const maxMembers = optionalNumber('maxMembers', o.maxMembers, DEFAULT_MEMBER_CAPACITY, {
    integer: true,
    min: 1,
    max: 4096,
  })
  const now = optionalFunction<Clock>('now', o.now)
  return { shared, namespace, maxMembers, now, lanes: shared === undefined ? 1 : maxMembers }
}

import type { Clock } from '../signals/clock'
import { checkSharedName, optionalFunction, optionalNumber } from '../validate'
import { DEFAULT_MEMBER_CAPACITY } from './shared-region'

/**
 * The options every component takes about where its state lives and what clock it reads (docs/vocabulary.md):
 * each component's options extend it.
 */
export interface SharingOptions {
  /** One component for every thread and process of the host that uses this name (default: local to the thread). */
  shared?: string
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
  maxMembers: number
  /** The injected clock, if any (components choose their default). */
  now: Clock | undefined
  /** Lanes a layout needs: the member capacity when shared, 1 when local. */
  lanes: number
}

/** Validates `shared`, `maxMembers` and `now`, once for every component. */
export function resolveSharing(o: { shared?: unknown; maxMembers?: unknown; now?: unknown }): ResolvedSharing {
  const shared = o.shared === undefined ? undefined : checkSharedName('shared', o.shared)
  const maxMembers = optionalNumber('maxMembers', o.maxMembers, DEFAULT_MEMBER_CAPACITY, {
    integer: true,
    min: 1,
    max: 4096,
  })
  const now = optionalFunction<Clock>('now', o.now)
  return { shared, maxMembers, now, lanes: shared === undefined ? 1 : maxMembers }
}

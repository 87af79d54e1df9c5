import { RegionLayout } from '../shared/region-layout'
import { DEFAULT_MEMBER_CAPACITY, SharedRegion } from '../shared/shared-region'
import { coarseNow, type Clock } from '../signals/clock'
import { checkSharedName, optionalFunction, optionalNumber } from '../validate'
import { SpinLock } from './spin-lock'

/** The options every local limiter takes about where its state lives and what clock it reads. */
export interface SharingOptions {
  /** One limiter for every thread and process of the host that uses this name. */
  shared?: string
  /** Attachments a shared limiter accepts (threads x instances across the host; default 64). */
  maxMembers?: number
  /** Monotonic clock in ms (default: the coarse clock). */
  now?: Clock
}

export interface Sharing {
  shared: string | undefined
  now: Clock
  /** A layout of `kind` with the member capacity these options ask for. */
  layout(kind: string): RegionLayout
}

export function resolveSharing(o: SharingOptions): Sharing {
  const shared = o.shared === undefined ? undefined : checkSharedName('shared', o.shared)
  const maxMembers = optionalNumber('maxMembers', o.maxMembers, DEFAULT_MEMBER_CAPACITY, { min: 1, max: 4096, integer: true })
  const now = optionalFunction<Clock>('now', o.now) ?? coarseNow
  return { shared, now, layout: (kind) => new RegionLayout(kind, shared === undefined ? 1 : maxMembers) }
}

/** A limiter's region, and the spin lock at `lockOffset` when the region is shared (a local one needs none). */
export function openLimiterRegion(
  shared: string | undefined,
  layout: RegionLayout,
  lockOffset: number,
): { region: SharedRegion; lock: SpinLock | undefined } {
  const region = SharedRegion.forComponent(shared, layout)
  return { region, lock: region.shared ? new SpinLock(region, lockOffset) : undefined }
}

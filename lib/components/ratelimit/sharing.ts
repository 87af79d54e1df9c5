import { RegionLayout } from '../../foundation/regions/region-layout'
import { SharedRegion } from '../../foundation/regions/shared-region'
import { type SharingOptions, resolveSharing } from '../../foundation/regions/sharing-options'
import { coarseNow, type Clock } from '../../foundation/signals/clock'
import { SpinLock } from '../../foundation/regions/spin-lock'

export type { SharingOptions }

export interface Sharing {
  shared: string | undefined
  /** The application namespace of `shared` (docs/guide/trust.md); undefined when not shared. */
  namespace: string | undefined
  now: Clock
  /** A layout of `kind` with the member capacity these options ask for. */
  layout(kind: string): RegionLayout
}

export function resolveLimiterSharing(o: SharingOptions): Sharing {
  const { shared, namespace, now, lanes } = resolveSharing(o)
  return { shared, namespace, now: now ?? coarseNow, layout: (kind) => new RegionLayout(kind, lanes) }
}

/** A limiter's region, and the spin lock at `lockOffset` when the region is shared (a local one needs none). */
export function openLimiterRegion(
  shared: string | undefined,
  namespace: string | undefined,
  layout: RegionLayout,
  lockOffset: number,
): { region: SharedRegion; lock: SpinLock | undefined } {
  const region = SharedRegion.forComponent(shared, layout, namespace)
  return { region, lock: region.shared ? new SpinLock(region, lockOffset) : undefined }
}

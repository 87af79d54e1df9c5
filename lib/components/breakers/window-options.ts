import { RegionLayout, type WindowPlacement } from '../../foundation/regions/region-layout'
import { resolveSharing } from '../../foundation/regions/sharing-options'
import { type Clock, coarseNow } from '../../foundation/signals/clock'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { optionalNumber } from '../../foundation/common/validate'

/** The options every windowed breaker takes, resolved. */
export interface ResolvedWindowOptions {
  window: number
  buckets: number
  shared: string | undefined
  /** The application namespace of `shared` (docs/guide/trust.md); undefined when not shared. */
  namespace: string | undefined
  maxMembers: number
  now: Clock
}

interface RawWindowOptions {
  window?: unknown
  buckets?: unknown
  shared?: unknown
  maxMembers?: unknown
  now?: unknown
}

export function resolveWindowOptions(
  o: RawWindowOptions,
  defaults: { window: number; buckets: number },
): ResolvedWindowOptions {
  const window = optionalNumber('window', o.window, defaults.window, { above: 0, max: 86_400_000 })
  const buckets = optionalNumber('buckets', o.buckets, defaults.buckets, { integer: true, min: 1, max: 10_000 })
  // A window of a few denormals divided into buckets is 0 ms per bucket: refuse it here, naming the option.
  if (!(window / buckets > 0))
    throw new InvalidOptionError('window', window, `large enough that window / buckets (${buckets}) > 0`)
  const { shared, namespace, maxMembers, now } = resolveSharing(o)
  return { window, buckets, shared, namespace, maxMembers, now: now ?? coarseNow }
}

/** A layout whose first part is the rolling window; `settings` are what sharing members must agree on. */
export function windowLayout(
  kind: string,
  w: ResolvedWindowOptions,
  settings: string,
): { layout: RegionLayout; placement: WindowPlacement } {
  const layout = new RegionLayout(kind, w.shared === undefined ? 1 : w.maxMembers).describe(
    `v1 window=${w.window} buckets=${w.buckets} ${settings}`.trim(),
  )
  return { layout, placement: layout.window(w.buckets, w.window / w.buckets, w.now()) }
}

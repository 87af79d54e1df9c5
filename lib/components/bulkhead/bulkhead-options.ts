import { type LatencyOptions, resolveLatencyOptions } from '../../admission/limits/latency-options'
import type { ShadowRule } from '../../foundation/live-rules/shadow-tally'
import { resolveShares } from '../bbr/bbr-options'
import type { PriorityName } from '../../admission/priority'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { resolveSharing, type SharingOptions } from '../../foundation/regions/sharing-options'
import { checkOptions, optionalNumber } from '../../foundation/common/validate'

export interface AdaptiveBulkheadOptions extends SharingOptions {
  /** How the limit is learned from the upstream's latency (docs/rules/latency.md). */
  latency?: Partial<LatencyOptions>
  /** Length of the rolling windows of completions and response times, ms (default 2000). */
  window?: number
  /** Buckets per window (default 20); `window` must be a multiple of it. */
  buckets?: number
  /** Share of the limit each priority class may fill (defaults: critical 1.2, high 1.1, normal 1, low 0.8). */
  priorities?: Partial<Record<PriorityName, number>>
}

export interface ResolvedBulkheadOptions {
  latency: LatencyOptions
  window: number
  buckets: number
  shares: Float64Array
  shared: string | undefined
  /** The application namespace of `shared` (docs/guide/trust.md); undefined when not shared. */
  namespace: string | undefined
  lanes: number
  now: (() => number) | undefined
}

export function resolveBulkheadOptions(options: unknown): ResolvedBulkheadOptions {
  const o = checkOptions<AdaptiveBulkheadOptions>(options, 'options')
  const window = optionalNumber('window', o.window, 2000, { integer: true, min: 2, max: 3_600_000 })
  const buckets = optionalNumber('buckets', o.buckets, 20, { integer: true, min: 2, max: 10_000 })
  if (window % buckets !== 0) throw new InvalidOptionError('window', window, `a multiple of buckets (${buckets})`)
  const { shared, namespace, lanes, now } = resolveSharing(o)
  return {
    latency: resolveLatencyOptions(o.latency, 'latency', now !== undefined),
    window,
    buckets,
    shares: resolveShares(o.priorities),
    shared,
    namespace,
    lanes,
    now,
  }
}

/** The latency tunables a live rule changes (docs/rules/live-rules.md). */
export type BulkheadTunables = Pick<LatencyOptions, 'buffer' | 'minLimit' | 'maxLimit' | 'probeInterval'>

/** The fields of an AdaptiveBulkhead's rule that `configure` changes at run time (docs/rules/live-rules.md). */
export interface AdaptiveBulkheadRule extends ShadowRule {
  latency?: Partial<Pick<LatencyOptions, 'buffer' | 'minLimit' | 'maxLimit' | 'probeInterval'>>
}

/** The live rule's fields, in the rule block's order. */
export const BULKHEAD_RULE_FIELDS = ['latency.buffer', 'latency.minLimit', 'latency.maxLimit', 'latency.probeInterval']

/** A whole rule in BULKHEAD_RULE_FIELDS order, validated as the constructor validates `latency`. */
export function resolveBulkheadRuleValues(rule: Record<string, number>): number[] {
  const tunables = {
    buffer: rule['latency.buffer'],
    minLimit: rule['latency.minLimit'],
    maxLimit: rule['latency.maxLimit'],
    probeInterval: rule['latency.probeInterval'],
  }
  return bulkheadRuleValues(resolveLatencyOptions(tunables, 'latency', true))
}

/** The rule values of latency options `o`, in BULKHEAD_RULE_FIELDS order. */
export function bulkheadRuleValues(o: BulkheadTunables): number[] {
  return [o.buffer, o.minLimit, o.maxLimit, o.probeInterval]
}

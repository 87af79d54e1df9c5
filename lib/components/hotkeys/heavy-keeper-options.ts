import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { resolveSharing, type SharingOptions } from '../../foundation/regions/sharing-options'
import { checkNumber, checkOptions, optionalNumber, refuseFields, renamedTo } from '../../foundation/common/validate'

/** A HeavyKeeper reads no clock, so it takes the sharing options without `now`. */
export interface HeavyKeeperOptions extends Omit<SharingOptions, 'now'> {
  /** How many keys to keep (default 100). */
  k?: number
  /** Buckets per row (default 1024 * max(1, floor(ln k)), as the reference hot-key cache sizes it). */
  width?: number
  /** Rows (default 4). Memory is width * depth * 8 bytes. */
  depth?: number
  /** Decay base in (0, 1): a colliding key decrements a count c with probability decay^c (default 0.925). */
  decay?: number
  /** A key enters the top-k only once its count reaches this (default 0). */
  minCount?: number
  /** Seed of the random decrements: the same seed and the same adds give the same result (default: random). */
  seed?: number
}

export interface ResolvedHeavyKeeperOptions {
  k: number
  width: number
  depth: number
  decay: number
  minCount: number
  shared: string | undefined
  /** The application namespace of `shared` (docs/guide/trust.md); undefined when not shared. */
  namespace: string | undefined
  seed: number
  maxMembers: number
}

const MAX_K = 2 ** 24
const MAX_SKETCH_BYTES = 2 ** 30
const MAX_LANE_BYTES = 2 ** 30

/** The reference hot-key cache's width for k keys: 1024 * max(1, floor(ln k)). */
export function defaultWidth(k: number): number {
  return 1024 * Math.max(1, Math.floor(Math.log(k)))
}

/** Validates HeavyKeeper options and fills in the defaults. `publishBytes(k)` is one member's lane size. */
export function resolveHeavyKeeperOptions(
  options: unknown,
  publishBytes: (k: number) => number,
): ResolvedHeavyKeeperOptions {
  const o = checkOptions<HeavyKeeperOptions>(options, 'options')
  refuseFields(o, { members: renamedTo('maxMembers'), now: 'absent (a HeavyKeeper reads no clock)' })
  const k = optionalNumber('k', o.k, 100, { integer: true, min: 1, max: MAX_K })
  const width = optionalNumber('width', o.width, defaultWidth(k), { integer: true, min: 1, max: 2 ** 28 })
  const depth = optionalNumber('depth', o.depth, 4, { integer: true, min: 1, max: 64 })
  if (width * depth * 8 > MAX_SKETCH_BYTES)
    throw new InvalidOptionError(
      'width',
      width,
      `at most ${MAX_SKETCH_BYTES / 8 / depth} with depth ${depth} (1 GiB of buckets)`,
    )
  const decay = checkNumber('decay', o.decay === undefined ? 0.925 : o.decay, { above: 0 })
  if (decay >= 1) throw new InvalidOptionError('decay', decay, 'a number in (0, 1)')
  const minCount = optionalNumber('minCount', o.minCount, 0, { integer: true, min: 0, max: 2 ** 32 - 1 })
  const { shared, namespace, maxMembers } = resolveSharing(o)
  const seed =
    o.seed === undefined
      ? Math.floor(Math.random() * Number.MAX_SAFE_INTEGER)
      : checkNumber('seed', o.seed, { integer: true, min: 0, max: Number.MAX_SAFE_INTEGER })
  if (shared !== undefined && publishBytes(k) * maxMembers > MAX_LANE_BYTES) {
    throw new InvalidOptionError(
      'k',
      k,
      `small enough that maxMembers x k published keys fit 1 GiB (${maxMembers} members)`,
    )
  }
  return { k, width, depth, decay, minCount, shared, namespace, seed, maxMembers }
}

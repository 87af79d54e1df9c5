import { placeRules, RATE_SHADOW, type RulePlacement } from '../../foundation/live-rules/rule-block'
import type { RegionLayout } from '../../foundation/regions/region-layout'

/** Payload offsets of a sliding window's cells. */
export interface SlidingWindowCells {
  lock: number
  epoch: number
  total: number
  slot: number
  origin: number
  /** The give-back sequence word (Int32), in the lock's line. */
  wake: number
  counts: number
  rules: RulePlacement
}

/**
 * A sliding window's cells in `layout` (kind 'sliding-window'): one line for the lock word (Int32 at +0), the
 * newest bucket's epoch (+8), the total of the live buckets (+16) and the newest bucket's slot (+24, so that a
 * decision needs no modulo of a float); then the clock reading at creation and the bucket counts. Watchers such as
 * `bulwark top` lay out a snapshot with it.
 */
export function placeSlidingWindow(
  layout: RegionLayout,
  limit: number,
  window: number,
  buckets: number,
  origin: number,
): SlidingWindowCells {
  layout.describe(`v3 limit=${limit} window=${window} buckets=${buckets}`)
  const lock = layout.cell(0, true)
  return {
    lock,
    epoch: lock + 8,
    total: lock + 16,
    slot: lock + 24,
    // The give-back sequence (an Int32 at line + 32) is a free part of the lock's line: the layout is unchanged.
    wake: lock + 32,
    origin: layout.cell(origin),
    counts: layout.block(buckets * 8),
    rules: placeRules(layout, [limit], RATE_SHADOW),
  }
}

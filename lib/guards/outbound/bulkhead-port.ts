import type { AdaptiveBulkhead } from '../../components/bulkhead/adaptive-bulkhead'
import { BulkheadPool, type BulkheadPoolOptions } from '../../components/bulkhead/bulkhead-pool'
import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { Shed } from '../../foundation/errors/shed'

export interface BulkheadChoice {
  /**
   * An adaptive bulkhead per upstream (docs/rules/latency.md): a saturated upstream gets a bounded number of calls
   * in flight, and the calls over it fail at once. Default: a new BulkheadPool (closed by the guard's `close()`);
   * a BulkheadPool to share; its options; or false for none.
   */
  bulkheads?: BulkheadPool | BulkheadPoolOptions | false
}

/** The guard's bulkheads, and whether it made them (and so closes them). */
export function resolveBulkheads(value: unknown): { pool: BulkheadPool | undefined; owns: boolean } {
  if (value === false) return { pool: undefined, owns: false }
  if (value instanceof BulkheadPool) return { pool: value, owns: false }
  if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new InvalidOptionError('bulkheads', value, 'a BulkheadPool, BulkheadPool options, or false')
  }
  return { pool: new BulkheadPool(value as BulkheadPoolOptions | undefined), owns: true }
}

/** What a guarded call asks of an upstream's bulkhead. */
export type BulkheadSlots = Pick<AdaptiveBulkhead, 'tryAcquire' | 'release'>

/**
 * Stands for the bulkhead of an upstream its pool had no room for (every bulkhead the pool looked at has calls in
 * flight): it is full, so that the upstream's calls are rejected until the pool has room.
 */
export const noRoomBulkhead: BulkheadSlots = {
  tryAcquire: () => Shed.latency,
  release: () => undefined,
}

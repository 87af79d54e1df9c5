import { BulkheadPool, type BulkheadPoolOptions } from '../bulkhead/bulkhead-pool'
import { InvalidOptionError } from '../errors/invalid-option-error'

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

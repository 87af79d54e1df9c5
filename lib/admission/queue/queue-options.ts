import { InvalidOptionError } from '../../foundation/errors/invalid-option-error'
import { optionalNumber } from '../../foundation/common/validate'

// Kept apart from the queue (admission-queue.ts), which only limiters made with `maxWait` load.

/** The queue's options, resolved (docs/rules/queue.md). */
export interface AdmissionQueueOptions {
  /** The longest a request waits for a slot, ms. */
  maxWait: number
  /** The most requests waiting at once in this process. */
  maxQueue: number
}

const DEFAULT_MAX_QUEUE = 128

/** Validates `maxWait` and `maxQueue`; undefined when there is no queue (maxWait 0, the default). */
export function resolveQueueOptions(maxWait: unknown, maxQueue: unknown): AdmissionQueueOptions | undefined {
  const wait = optionalNumber('maxWait', maxWait, 0, { min: 0, max: 60_000 })
  const size = optionalNumber('maxQueue', maxQueue, DEFAULT_MAX_QUEUE, { integer: true, min: 1, max: 1_000_000 })
  if (wait === 0) {
    if (maxQueue !== undefined) throw new InvalidOptionError('maxQueue', maxQueue, 'set together with maxWait > 0')
    return undefined
  }
  return { maxWait: wait, maxQueue: size }
}

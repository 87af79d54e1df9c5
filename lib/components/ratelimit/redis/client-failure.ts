import { describeValue } from '../../../foundation/errors/describe-value'
import { RedisError } from '../../../foundation/errors/redis-error'

/** A failure of the Redis client as a RedisError: `what` failed, with the client's message; its error as cause. */
export function clientFailure(what: string, error: unknown): RedisError {
  // describeValue, not String(): String() of an object without a prototype throws.
  const detail = error instanceof Error ? error.message : describeValue(error)
  return new RedisError(`${what}: ${detail}`, error)
}

import type { EventSource } from '../../../foundation/common/event-source'
import type { RedisError } from '../../../foundation/errors/redis-error'
import { GCRA_ADJUST_SCRIPT, SLIDING_WINDOW_ADJUST_SCRIPT } from './adjust-scripts'
import { clientFailure } from './client-failure'
import type { RedisPort } from './clients/redis-port'
import type { ResolvedRedisOptions } from './redis-options'
import { scriptSha } from './redis-scripts'
import { runScript } from './run-script'

/**
 * How RedisRateLimiter settles a reservation: one adjust script call for the key (adjust-scripts.ts), not awaited;
 * a failure is reported on onError and the permits stay as reserved (the estimate stands).
 */
export function adjusterFor(
  port: RedisPort,
  options: () => ResolvedRedisOptions,
  timeArg: () => string,
  redisKeyOf: (key: string) => string,
  errors: EventSource<RedisError>,
): (key: string, delta: number) => Promise<void> {
  const gcra = options().algorithm === 'gcra'
  const script = gcra ? GCRA_ADJUST_SCRIPT : SLIDING_WINDOW_ADJUST_SCRIPT
  const sha = scriptSha(script)
  return (key, delta) => {
    if (!(delta > -Infinity && delta < Infinity) || delta === 0) return Promise.resolve()
    // The limit in force now: a live rule (docs/rules/live-rules.md) may have changed it since the reservation.
    const o = options()
    const params = gcra ? [String(o.window / o.limit), String(o.burst)] : [String(o.limit), String(o.window)]
    return runScript(port, script, sha, [redisKeyOf(key)], [...params, timeArg(), String(delta)]).then(
      () => undefined,
      (error: unknown) => errors.emit(clientFailure('settling a reservation failed', error)),
    )
  }
}

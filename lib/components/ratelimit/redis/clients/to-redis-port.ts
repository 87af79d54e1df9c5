import { InvalidOptionError } from '../../../../foundation/errors/invalid-option-error'
import { GlidePort, isGlide } from './glide-port'
import { IoredisPort, type RedisScriptClient } from './ioredis-port'
import { NodeRedisPort, isNodeRedis } from './node-redis-port'
import type { RedisPort } from './redis-port'

const EXPECTED =
  'a Redis client: ioredis or iovalkey (Redis or Cluster), node-redis (createClient or createCluster), a Valkey GLIDE client, or an object with evalsha and eval as ioredis has them'

/** Adapts whichever supported client `redis` is; the option's value is checked here. */
export function toRedisPort(redis: unknown): RedisPort {
  if (redis === null || typeof redis !== 'object') throw new InvalidOptionError('redis', redis, EXPECTED)
  // GLIDE and node-redis first: their method names are unambiguous, where evalsha/eval is the generic shape.
  if (isGlide(redis)) return new GlidePort(redis)
  if (isNodeRedis(redis)) return new NodeRedisPort(redis)
  const c = redis as Partial<RedisScriptClient>
  if (typeof c.evalsha === 'function' && typeof c.eval === 'function') return new IoredisPort(c as RedisScriptClient)
  throw new InvalidOptionError('redis', redis, EXPECTED)
}

// 'bulwark/redis': the rate limiter whose state lives in Redis or Valkey (any of the supported clients, optional
// peers), with a local insurance limiter while Redis cannot answer.
export { RedisRateLimiter } from '../components/ratelimit/redis/redis-rate-limiter'
export { RedisQuota } from '../components/ratelimit/redis/redis-quota'
export type { RedisQuotaOptions, RedisQuotaStats } from '../components/ratelimit/redis/redis-quota'
export { RedisError } from '../foundation/errors/redis-error'
export type {
  RateLimitDecision,
  RedisLimiterState,
  RedisRateLimiterStats,
} from '../components/ratelimit/redis/redis-rate-limiter'
export type {
  RedisAlgorithm,
  RedisClient,
  RedisRateLimiterOptions,
  RedisRateLimiterRule,
  RedisScriptClient,
} from '../components/ratelimit/redis/redis-options'
export type { NodeRedisClient, NodeRedisScriptOptions } from '../components/ratelimit/redis/clients/node-redis-port'
export type { GlideClient } from '../components/ratelimit/redis/clients/glide-port'

// BULWARK_RULES=<url>: the process follows that fleet rule source with no code change (entries/rules-env.ts).
import './rules-env'

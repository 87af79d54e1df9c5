import { createHash } from 'crypto'

// Both scripts return { allowed (0 or 1), remaining permits, retry after (µs) } and take the time from the Redis
// server (TIME) unless ARGV[4] carries one (tests). Each touches only KEYS[1], so they run on Redis Cluster. Writing
// after TIME needs effects replication, the default from Redis 5.
const PREAMBLE = `
local cost = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
`

/**
 * Sliding-window counter: the count of the current fixed window plus the previous window's count weighted by the
 * share of it still inside the sliding window. KEYS[1] is a hash: w = current window's index, c = its count,
 * p = the previous window's count. ARGV: limit, window (ms), cost, now (ms, or empty).
 */
export const SLIDING_WINDOW_SCRIPT = `${PREAMBLE}
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local index = math.floor(now / window)
local state = redis.call('HMGET', KEYS[1], 'w', 'c', 'p')
local w = tonumber(state[1])
local current = tonumber(state[2]) or 0
local previous = tonumber(state[3]) or 0
local rolled = w == nil or w < index
if rolled then
  if w == index - 1 then previous = current else previous = 0 end
  current = 0
elseif w > index then
  index = w
end
local into = now / window - index
if into < 0 then into = 0 end
local used = previous * (1 - into) + current
if used + cost <= limit then
  if rolled then
    -- First write in this window: the key is needed until the next window ends, two windows from now at most.
    redis.call('HSET', KEYS[1], 'w', index, 'c', current + cost, 'p', previous)
    redis.call('PEXPIRE', KEYS[1], math.ceil(window * 2))
  else
    redis.call('HSET', KEYS[1], 'c', current + cost)
  end
  return {1, math.floor(limit - used - cost + 1e-9), 0}
end
local wait
if current + cost <= limit then
  wait = (index + 1 - (limit - current - cost) / previous) * window - now
else
  wait = (index + 1) * window - now + math.max(0, 1 - (limit - cost) / current) * window
end
return {0, math.max(0, math.floor(limit - used + 1e-9)), math.ceil(math.max(0, wait) * 1000)}
`

/**
 * GCRA: KEYS[1] holds the theoretical arrival time (ms, as text): when the key's bucket will be full again.
 * ARGV: interval (ms per permit), burst, cost, now (ms, or empty).
 */
export const GCRA_SCRIPT = `${PREAMBLE}
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local nextTat = tat + cost * interval
local limitTat = now + burst * interval
if nextTat <= limitTat then
  redis.call('SET', KEYS[1], string.format('%.17g', nextTat), 'PX', math.max(1, math.ceil(nextTat - now)))
  return {1, math.max(0, math.floor((limitTat - nextTat) / interval + 1e-9)), 0}
end
return {0, math.max(0, math.floor((limitTat - tat) / interval + 1e-9)), math.ceil((nextTat - limitTat) * 1000)}
`

/** The SHA1 Redis knows a script by (EVALSHA). */
export function scriptSha(script: string): string {
  return createHash('sha1').update(script).digest('hex')
}

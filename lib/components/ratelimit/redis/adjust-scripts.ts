import { CLOCK } from './redis-scripts'

// Settling a reservation made through RedisRateLimiter (docs/guide/ratelimit.md, "Reserve, then settle"): one
// key, ARGV = the limit's two parameters, the time (ms, or '' for the server's TIME), then the delta in permits
// (> 0 takes more, < 0 gives back). Replies 1.
const PREAMBLE = `${CLOCK}local delta = tonumber(ARGV[4])
`

/**
 * GCRA: the arrival time moves by delta x interval, from now when it lies in the past (an overdraw is charged from
 * now, a give-back never makes the bucket more than full). A bucket back to full is deleted. ARGV[1..2]: interval,
 * burst.
 */
export const GCRA_ADJUST_SCRIPT = `${PREAMBLE}
local interval = tonumber(ARGV[1])
local span = tonumber(ARGV[2]) * interval
local tat = tonumber(redis.call('HGET', KEYS[1], 't')) or now
if tat < now then tat = now end
tat = tat + delta * interval
if tat <= now then
  redis.call('DEL', KEYS[1])
  return 1
end
redis.call('HSET', KEYS[1], 't', tat, 'e', tat + span)
redis.call('PEXPIRE', KEYS[1], math.ceil(tat + span - now))
return 1
`

/**
 * Sliding window: the current window's count moves by delta (never below 0); a give-back whose window has just
 * ended comes off the previous window's count instead. ARGV[1..2]: limit, window.
 */
export const SLIDING_WINDOW_ADJUST_SCRIPT = `${PREAMBLE}
local window = tonumber(ARGV[2])
local index = math.floor(now / window)
local state = redis.call('HMGET', KEYS[1], 'w', 'c', 'p')
local w = tonumber(state[1])
local current = tonumber(state[2]) or 0
local previous = tonumber(state[3]) or 0
if w == nil or w < index - 1 then
  if delta <= 0 then return 1 end
  redis.call('HSET', KEYS[1], 'w', index, 'c', delta, 'p', 0)
elseif w == index - 1 then
  if delta > 0 then
    redis.call('HSET', KEYS[1], 'w', index, 'c', delta, 'p', current)
  else
    redis.call('HSET', KEYS[1], 'w', index, 'c', 0, 'p', math.max(0, current + delta))
  end
else
  redis.call('HSET', KEYS[1], 'c', math.max(0, current + delta))
end
redis.call('PEXPIRE', KEYS[1], math.ceil(window * 2))
return 1
`

import { createHash } from 'crypto'

// Each script decides a batch of decisions in one call (docs/readme/ratelimit.md, "Redis: the fleet tier"):
// KEYS[i] is decision i's key (a key may repeat), ARGV = the limit's two parameters, the time (ms, or '' for the
// server's TIME), then each decision's cost. Decisions are taken in order, exactly as one call each would be, but
// each distinct key is read once and written once, and TIME is read once per call. The reply holds two numbers per
// decision: the permits remaining, and 0 when admitted or the wait in µs (>= 1) when refused. On Redis Cluster the
// keys of one call share a hash slot. Writing after TIME needs effects replication, the default from Redis 5.
const PREAMBLE = `
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local reply = {}
`

/**
 * Sliding-window counter: the count of the current fixed window plus the previous window's count weighted by the
 * share of it still inside the sliding window. Each key is a hash: w = current window's index, c = its count,
 * p = the previous window's count. ARGV[1..2]: limit, window (ms).
 */
export const SLIDING_WINDOW_SCRIPT = `${PREAMBLE}
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local nowIndex = math.floor(now / window)
-- Per distinct key: { window index, current count, previous count, weighted previous, rolled, written }
local seen = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local s = seen[key]
  if s == nil then
    local state = redis.call('HMGET', key, 'w', 'c', 'p')
    local w = tonumber(state[1])
    local current = tonumber(state[2]) or 0
    local previous = tonumber(state[3]) or 0
    local index = nowIndex
    local rolled = w == nil or w < index
    if rolled then
      if w == index - 1 then previous = current else previous = 0 end
      current = 0
    elseif w > index then
      index = w
    end
    local into = now / window - index
    if into < 0 then into = 0 end
    s = { index, current, previous, previous * (1 - into), rolled, false }
    seen[key] = s
  end
  local cost = tonumber(ARGV[3 + i])
  local used = s[4] + s[2]
  -- 1e-9 of a permit: at exactly the time a refusal named, rounding must not refuse again.
  if used + cost <= limit + 1e-9 then
    s[2] = s[2] + cost
    s[6] = true
    reply[2 * i - 1] = math.floor(limit - used - cost + 1e-9)
    reply[2 * i] = 0
  else
    local current, previous, index = s[2], s[3], s[1]
    local wait
    if current + cost <= limit then
      wait = (index + 1 - (limit - current - cost) / previous) * window - now
    else
      wait = (index + 1) * window - now + math.max(0, 1 - (limit - cost) / current) * window
    end
    reply[2 * i - 1] = math.max(0, math.floor(limit - used + 1e-9))
    reply[2 * i] = math.max(1, math.ceil(wait * 1000))
  end
end
for key, s in pairs(seen) do
  if s[6] then
    if s[5] then
      -- First write in this window: the key is needed until the next window ends, two windows from now at most.
      redis.call('HSET', key, 'w', s[1], 'c', s[2], 'p', s[3])
      redis.call('PEXPIRE', key, math.ceil(window * 2))
    else
      redis.call('HSET', key, 'c', s[2])
    end
  end
end
return reply
`

/**
 * GCRA: each key holds the theoretical arrival time (ms, as text): when the key's bucket will be full again.
 * ARGV[1..2]: interval (ms per permit), burst.
 */
export const GCRA_SCRIPT = `${PREAMBLE}
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local limitTat = now + burst * interval
local tats = {}
local written = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local tat = tats[key]
  if tat == nil then
    tat = tonumber(redis.call('GET', key)) or now
    if tat < now then tat = now end
  end
  local nextTat = tat + tonumber(ARGV[3 + i]) * interval
  -- 1 µs: at exactly the time a refusal named, rounding must not refuse again.
  if nextTat <= limitTat + 0.001 then
    tat = nextTat
    written[key] = true
    reply[2 * i - 1] = math.max(0, math.floor((limitTat - nextTat) / interval + 1e-9))
    reply[2 * i] = 0
  else
    reply[2 * i - 1] = math.max(0, math.floor((limitTat - tat) / interval + 1e-9))
    reply[2 * i] = math.max(1, math.ceil((nextTat - limitTat) * 1000))
  end
  tats[key] = tat
end
for key in pairs(written) do
  local tat = tats[key]
  redis.call('SET', key, string.format('%.17g', tat), 'PX', math.max(1, math.ceil(tat - now)))
end
return reply
`

/** The SHA1 Redis knows a script by (EVALSHA). */
export function scriptSha(script: string): string {
  return createHash('sha1').update(script).digest('hex')
}

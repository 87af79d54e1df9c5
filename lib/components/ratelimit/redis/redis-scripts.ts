import { createHash } from 'crypto'

// Each script decides a batch of decisions in one call (docs/readme/ratelimit.md, "Redis: the fleet tier"):
// KEYS[i] is decision i's key (a key may repeat), ARGV = the limit's two parameters, the time (ms, or '' for the
// server's TIME), then each decision's cost. Decisions are taken in order, exactly as one call each would be, but
// each distinct key is read once and written once, and TIME is read once per call. The reply holds two numbers per
// decision: the permits remaining, then 0 when admitted with a permit left, -W when admitted with none left (W: µs
// until the next permit, >= 1), or W when refused (µs until the permits asked for, >= 1). On Redis Cluster the keys
// of one call share a hash slot. Writing after TIME needs effects replication, the default from Redis 5.
/** The time: ARGV[3] (ms), or the server's TIME when it is ''. */
export const CLOCK = `
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
`
const PREAMBLE = `${CLOCK}local reply = {}
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
-- Until \`cost\` fits, counted in µs (>= 1), if nobody else takes any.
local function waitUs(cost, current, previous, index)
  local wait
  if current + cost <= limit then
    wait = (index + 1 - (limit - current - cost) / previous) * window - now
  else
    wait = (index + 1) * window - now + math.max(0, 1 - (limit - cost) / current) * window
  end
  return math.max(1, math.ceil(wait * 1000))
end
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
    local left = math.floor(limit - used - cost + 1e-9)
    reply[2 * i - 1] = left
    if left >= 1 then reply[2 * i] = 0 else reply[2 * i] = -waitUs(1, s[2], s[3], s[1]) end
  else
    reply[2 * i - 1] = math.max(0, math.floor(limit - used + 1e-9))
    reply[2 * i] = waitUs(cost, s[2], s[3], s[1])
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
 * GCRA: each key is a hash: t = the theoretical arrival time (ms): when the key's bucket will be full again;
 * e = when the key expires (ms). The expiry moves only when t would pass it, to t + burst x interval: one PEXPIRE
 * per bucketful at most instead of one per decision, and the key never expires while t is ahead of now.
 * ARGV[1..2]: interval (ms per permit), burst.
 */
export const GCRA_SCRIPT = `${PREAMBLE}
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local span = burst * interval
local limitTat = now + span
-- Per distinct key: { tat, expiry, written }
local seen = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local s = seen[key]
  if s == nil then
    local state = redis.call('HMGET', key, 't', 'e')
    local tat = tonumber(state[1]) or now
    if tat < now then tat = now end
    s = { tat, tonumber(state[2]) or 0, false }
    seen[key] = s
  end
  local tat = s[1]
  local nextTat = tat + tonumber(ARGV[3 + i]) * interval
  -- 1 µs: at exactly the time a refusal named, rounding must not refuse again.
  if nextTat <= limitTat + 0.001 then
    s[1] = nextTat
    s[3] = true
    local left = math.max(0, math.floor((limitTat - nextTat) / interval + 1e-9))
    reply[2 * i - 1] = left
    if left >= 1 then reply[2 * i] = 0 else reply[2 * i] = -math.max(1, math.ceil((nextTat + interval - limitTat) * 1000)) end
  else
    reply[2 * i - 1] = math.max(0, math.floor((limitTat - tat) / interval + 1e-9))
    reply[2 * i] = math.max(1, math.ceil((nextTat - limitTat) * 1000))
  end
end
for key, s in pairs(seen) do
  if s[3] then
    if s[1] <= s[2] then
      redis.call('HSET', key, 't', s[1])
    else
      local expiry = s[1] + span
      redis.call('HSET', key, 't', s[1], 'e', expiry)
      redis.call('PEXPIRE', key, math.ceil(expiry - now))
    end
  end
end
return reply
`

/** The SHA1 Redis knows a script by (EVALSHA). */
export function scriptSha(script: string): string {
  return createHash('sha1').update(script).digest('hex')
}

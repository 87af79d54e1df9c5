// RedisQuota's script (docs/guide/ratelimit.md, "Quotas"): two GCRA buckets under one hash tag, KEYS[1] the
// requests, KEYS[2] the cost. ARGV: [1] the time (ms, or '' for the server's TIME), [2] the operation, [3..4] the
// requests' interval and burst, [5..6] the cost's ('' for a limit the quota does not have), [7] and [8] the
// operation's request and cost amounts, [9] a pause in ms.
//   take:   one request (ARGV[7]) and the cost (ARGV[8]) if both fit; replies { 1, 0 }, or { 0, µs to wait }.
//   adjust: moves each bucket by its amount (> 0 takes more, from now; < 0 gives back); replies { 1, 0 }.
//   floor:  lowers each bucket to the amount left (never raises it), then empties both until now + pause.
export const QUOTA_SCRIPT = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local op = ARGV[2]
local buckets = {}
for b = 1, 2 do
  local interval = tonumber(ARGV[1 + 2 * b])
  if interval then
    local tat = tonumber(redis.call('HGET', KEYS[b], 't')) or now
    if tat < now then tat = now end
    buckets[b] = { interval = interval, span = tonumber(ARGV[2 + 2 * b]) * interval, tat = tat, old = tat,
      amount = tonumber(ARGV[6 + b]) }
  end
end
if op == 'take' then
  local wait = 0
  for b = 1, 2 do
    local k = buckets[b]
    if k and k.amount and k.amount > 0 then
      local over = k.tat + k.amount * k.interval - (now + k.span)
      if over > 0.001 and over > wait then wait = over end
    end
  end
  if wait > 0 then return { 0, math.max(1, math.ceil(wait * 1000)) } end
  for b = 1, 2 do
    local k = buckets[b]
    if k and k.amount then k.tat = k.tat + k.amount * k.interval end
  end
elseif op == 'adjust' then
  for b = 1, 2 do
    local k = buckets[b]
    if k and k.amount then k.tat = k.tat + k.amount * k.interval end
  end
elseif op == 'floor' then
  local pause = tonumber(ARGV[9]) or 0
  for b = 1, 2 do
    local k = buckets[b]
    if k then
      if k.amount then
        local floor = now + k.span - k.amount * k.interval
        if floor > k.tat then k.tat = floor end
      end
      if pause > 0 and now + pause + k.span > k.tat then k.tat = now + pause + k.span end
    end
  end
end
for b = 1, 2 do
  local k = buckets[b]
  if k and k.tat ~= k.old then
    if k.tat <= now then
      redis.call('DEL', KEYS[b])
    else
      redis.call('HSET', KEYS[b], 't', k.tat)
      redis.call('PEXPIRE', KEYS[b], math.ceil(k.tat - now + k.span))
    end
  end
end
return { 1, 0 }
`

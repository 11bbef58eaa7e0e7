-- Shared by every script: the server's clock in milliseconds, and small helpers.
-- A queued URL of this priority or more waits for the job's end: it is handed out only once
-- no host has anything else queued or leased (a page that waits for the rest of the job).
local END_TIER = 4294967296
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The priority of the next URL of the queue KEYS[1] (a sorted set by priority), or -1.
local function head()
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #first == 0 then return -1 end
  return tonumber(first[2])
end
-- Notes in `heads` (a sorted set) the priority of a host's next URL: `head` is a number,
-- 'none' (nothing queued: the host leaves the set) or '' (not known: unchanged).
local function set_head(heads, host, head)
  if head == 'none' then
    redis.call('ZREM', heads, host)
  elseif head ~= '' then
    redis.call('ZADD', heads, tonumber(head), host)
  end
end
local function num(v, default)
  if v then return tonumber(v) end
  return default
end

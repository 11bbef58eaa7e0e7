-- A leased URL is done with. ARGV after the settings: key, token, outcome ('answered',
-- 'throttled', 'failed', or 'none' when no request was made), Retry-After (ms, or -1), and
-- for a URL to fetch again later: its priority and entry (or -1 and '').
-- KEYS 8 and 9, when given: the host's decided marks and the links parked on this URL, whose
-- parking is settled (as settle.lua), stale lease or not.
-- Returns {'ok', now, hint, parked, the priority of the host's next URL} or {'stale', now} when the lease had expired (the URL
-- went back to the queue and may be fetched again by another worker).
local now = now_ms()
local key, token = ARGV[FIRST_ARG], ARGV[FIRST_ARG + 1]
local outcome, retry_after = ARGV[FIRST_ARG + 2], tonumber(ARGV[FIRST_ARG + 3])
local requeue_prio, requeue_entry = tonumber(ARGV[FIRST_ARG + 4]), ARGV[FIRST_ARG + 5]
if #KEYS >= 9 then
  redis.call('HDEL', KEYS[8], key)
  redis.call('DEL', KEYS[9])
end
local lease = redis.call('HGET', KEYS[4], key)
if not lease or string.match(lease, '^(%d+) ') ~= token then return {'stale', now} end
redis.call('HDEL', KEYS[4], key)
redis.call('ZREM', KEYS[3], key)
if requeue_prio >= 0 then
  local n = redis.call('HINCRBY', KEYS[5], 'order', 1)
  redis.call('ZADD', KEYS[1], requeue_prio, string.format('%016x:', n) .. key)
  redis.call('HSET', KEYS[2], key, requeue_entry)
else
  redis.call('HDEL', KEYS[2], key)
end
local fails = field('fails', 0)
local wait = 0
if outcome == 'answered' then
  fails = 0
  wait = delay()
  redis.call('HINCRBY', KEYS[5], 'fetched', 1)
elseif outcome == 'throttled' then
  fails = fails + 1
  if retry_after >= 0 then
    wait = math.max(math.min(retry_after, S.backoff_max_ms), delay())
  else
    wait = backoff(fails)
  end
elseif outcome == 'failed' then
  fails = fails + 1
  wait = backoff(fails)
end
local parked = field('parked', 0)
if outcome ~= 'none' and fails >= S.max_failures then parked = 1 end
redis.call('HSET', KEYS[5], 'active', math.max(field('active', 0) - 1, 0), 'fails', fails,
  'parked', parked, 'nb', math.max(field('nb', 0), now + wait))
return {'ok', now, hint(now), parked, head()}

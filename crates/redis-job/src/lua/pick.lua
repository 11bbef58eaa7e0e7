-- Picks the host that has waited longest among those ready now. KEYS: job, ready, stamps,
-- workers. ARGV: claim (ms: how long the host is hidden from other workers' picks), worker.
-- Returns {'host', now, host, stamp}, {'wait', now, at}, {'seed', now}, {'done', now} or
-- {'stopped', now}.
local now = now_ms()
redis.call('HSET', KEYS[4], ARGV[2], now)
if redis.call('HGET', KEYS[1], 'state') == 'stopped' then return {'stopped', now} end
if redis.call('HGET', KEYS[1], 'seeded') ~= 'done' then
  local until_ = num(redis.call('HGET', KEYS[1], 'seed_until'), 0)
  if until_ <= now then
    redis.call('HSET', KEYS[1], 'seed_until', now + 60000)
    return {'seed', now}
  end
  return {'wait', now, until_}
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #first == 0 then return {'done', now} end
local at = tonumber(first[2])
if at > now then return {'wait', now, at} end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), first[1])
return {'host', now, first[1], redis.call('HGET', KEYS[3], first[1]) or '0'}

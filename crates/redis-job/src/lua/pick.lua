-- Picks the host that has waited longest among those ready now; by priority ('1'), the one
-- whose next URL comes first, among the 64 best hosts (else the one that waited longest).
-- When no host is ready, none has anything queued or leased but what waits for the job's end:
-- the job's end is reached ('ending' in the job), and the hosts waiting for it are ready now.
-- KEYS: job, ready, stamps, workers, heads, hosts waiting for the job's end. ARGV: claim (ms:
-- how long the host is hidden from other workers' picks), worker, by priority ('1' or '0').
-- Returns {'host', now, host, stamp, ending ('1' or '0')}, {'wait', now, at}, {'seed', now},
-- {'done', now} or {'stopped', now}.
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
if #first == 0 then
  local waiting = redis.call('SMEMBERS', KEYS[6])
  if #waiting == 0 then return {'done', now} end
  redis.call('HSET', KEYS[1], 'ending', '1')
  for _, waiter in ipairs(waiting) do
    redis.call('ZADD', KEYS[2], now, waiter)
    redis.call('HINCRBY', KEYS[3], waiter, 1)
  end
  redis.call('DEL', KEYS[6])
  first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
end
local at = tonumber(first[2])
if at > now then return {'wait', now, at} end
local host = first[1]
if ARGV[3] == '1' then
  local best = redis.call('ZRANGE', KEYS[5], 0, 63)
  for _, candidate in ipairs(best) do
    local ready_at = redis.call('ZSCORE', KEYS[2], candidate)
    if ready_at and tonumber(ready_at) <= now then
      host = candidate
      break
    end
  end
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), host)
return {'host', now, host, redis.call('HGET', KEYS[3], host) or '0',
  redis.call('HGET', KEYS[1], 'ending') or '0'}

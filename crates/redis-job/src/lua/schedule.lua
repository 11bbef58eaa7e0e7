-- When a host may next give work, after a take or a finish. KEYS: ready, stamps. ARGV: host,
-- the stamp read when it was picked, the time (ms) or -1 when it had nothing queued or
-- leased. An empty host leaves the ready set only if no one announced it since the stamp
-- was read; otherwise it is looked at again now.
local same = (redis.call('HGET', KEYS[2], ARGV[1]) or '0') == ARGV[2]
local at = tonumber(ARGV[3])
if at < 0 then
  if same then
    redis.call('ZREM', KEYS[1], ARGV[1])
    return 1
  end
  redis.call('ZADD', KEYS[1], 'LT', now_ms(), ARGV[1])
  return 0
end
if same then
  redis.call('ZADD', KEYS[1], at, ARGV[1])
else
  redis.call('ZADD', KEYS[1], 'LT', at, ARGV[1])
end
return 0

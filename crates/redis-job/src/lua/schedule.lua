-- When a host may next give work, after a take or a finish. KEYS: ready, stamps, heads, job,
-- waiting for the job's end (a set of hosts). ARGV: host, the stamp read when it was picked,
-- the time (ms), -1 when it had nothing queued or leased, or -2 when all it has queued waits
-- for the job's end; and the priority of its next URL ('' when not known, 'none' when it has
-- nothing queued). An empty host leaves the ready set only if no one announced it since the
-- stamp was read; otherwise it is looked at again now. A host waiting for the job's end
-- leaves it the same way, for the set of those waiting (pick.lua brings them back once
-- nothing else is left); once the job's end is reached, it is ready now. A host no longer in
-- the ready set is not put back (XX): another worker found it empty since, after every
-- announcement this one saw, so this one's time is stale (it was read while a lease since
-- finished was still held).
local same = (redis.call('HGET', KEYS[2], ARGV[1]) or '0') == ARGV[2]
local at = tonumber(ARGV[3])
set_head(KEYS[3], ARGV[1], ARGV[4])
if at == -2 and redis.call('HGET', KEYS[4], 'ending') == '1' then at = now_ms() end
if at < 0 then
  if same then
    redis.call('ZREM', KEYS[1], ARGV[1])
    redis.call('ZREM', KEYS[3], ARGV[1])
    if at == -2 then redis.call('SADD', KEYS[5], ARGV[1]) end
    return 1
  end
  redis.call('ZADD', KEYS[1], 'XX', 'LT', now_ms(), ARGV[1])
  -- Times read before this (a lease was still held then) are stale: only earlier ones hold.
  redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
  return 0
end
if same then
  redis.call('ZADD', KEYS[1], 'XX', at, ARGV[1])
else
  redis.call('ZADD', KEYS[1], 'XX', 'LT', at, ARGV[1])
end
return 0

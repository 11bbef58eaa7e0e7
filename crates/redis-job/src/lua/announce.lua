-- Hosts that have (or may have) work from a time on. KEYS: ready, stamps, hosts, heads.
-- ARGV: triples host, time (ms of the server's clock, or 'now'), and the priority of the
-- host's next URL ('' when not known, 'none' when it has nothing queued). A host's time only ever moves earlier here, and its
-- stamp moves on, so a worker that found it empty does not retire it.
local now = now_ms()
for i = 1, #ARGV, 3 do
  local at = now
  if ARGV[i + 1] ~= 'now' then at = tonumber(ARGV[i + 1]) end
  redis.call('ZADD', KEYS[1], 'LT', at, ARGV[i])
  redis.call('HINCRBY', KEYS[2], ARGV[i], 1)
  redis.call('SADD', KEYS[3], ARGV[i])
  set_head(KEYS[4], ARGV[i], ARGV[i + 2])
end
return now

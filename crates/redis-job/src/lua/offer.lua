-- Queues URLs of one host that were never seen. KEYS: queue, entries, seen, politeness.
-- ARGV: triples key (hex), priority, entry. Returns 1 per URL queued, 0 per URL seen before,
-- then the priority of the host's next URL.
local out = {}
for i = 1, #ARGV, 3 do
  local key = ARGV[i]
  if redis.call('SADD', KEYS[3], key) == 1 then
    local n = redis.call('HINCRBY', KEYS[4], 'order', 1)
    redis.call('ZADD', KEYS[1], ARGV[i + 1], string.format('%016x:', n) .. key)
    redis.call('HSET', KEYS[2], key, ARGV[i + 2])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
out[#out + 1] = head()
return out

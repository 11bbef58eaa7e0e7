-- A worker decided a URL (before its lease is finished). KEYS (the URL's host): hubs,
-- decided, the URL's parked links. ARGV: the URL's key (hex), '1' if it led to new pages (a
-- hub) else '0'. From now on links are no longer parked on it (park.lua answers at once).
-- Returns the links parked on it, to follow if a hub, to drop if not; they stay parked
-- until settle.lua, so a worker killed before following them leaves them to the worker that
-- decides the URL again.
local key = ARGV[1]
if ARGV[2] == '1' then redis.call('SADD', KEYS[1], key) end
redis.call('HSET', KEYS[2], key, ARGV[2])
return redis.call('HVALS', KEYS[3])

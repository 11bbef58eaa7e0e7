-- Parks a duplicate's link until the URL it waits for (its counterpart, on the original's
-- site) is decided. KEYS (that URL's host): entries, hubs, decided, the URL's parked links.
-- ARGV: the URL's key (hex), the link's key (hex), the link (the engine's encoding).
-- Returns what it found of that URL, atomically with the parking: 'hub' (decided, and it led
-- to new pages), 'decided' (decided, or never queued) or 'parked' (not decided: the link
-- waits). What becomes of the link is the link policy's to say (`parking_answered`).
local key = ARGV[1]
if redis.call('SISMEMBER', KEYS[2], key) == 1 then return 'hub' end
if redis.call('HEXISTS', KEYS[3], key) == 1 then return 'decided' end
if redis.call('HEXISTS', KEYS[1], key) == 0 then return 'decided' end
redis.call('HSET', KEYS[4], ARGV[2], ARGV[3])
return 'parked'

-- Takes up to ARGV[FIRST_ARG] queued URLs out of a parked host's queue, for the caller to
-- record. Returns key, entry pairs.
local out = {}
local popped = redis.call('ZPOPMIN', KEYS[1], tonumber(ARGV[FIRST_ARG]))
for i = 1, #popped, 2 do
  local key = string.sub(popped[i], 18)
  out[#out + 1] = key
  out[#out + 1] = redis.call('HGET', KEYS[2], key) or ''
  redis.call('HDEL', KEYS[2], key)
end
return out

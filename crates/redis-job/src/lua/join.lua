-- A worker joins job KEYS[1] (its hash). ARGV: seed lease (ms), then the job's settings as
-- name, value pairs (used only by the worker that creates the job).
-- Returns {role, now, settings...}: role 'seed' (this worker seeds: the job is new, or its
-- seeding worker died) or 'join'; the settings are the job's, as name, value pairs.
local now = now_ms()
local seed_lease = tonumber(ARGV[1])
local role = 'join'
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'state', 'running', 'created', now, 'seeded', 'pending',
    'seed_until', now + seed_lease)
  for i = 2, #ARGV, 2 do
    redis.call('HSET', KEYS[1], 'set:' .. ARGV[i], ARGV[i + 1])
  end
  role = 'seed'
elseif redis.call('HGET', KEYS[1], 'seeded') ~= 'done'
    and num(redis.call('HGET', KEYS[1], 'seed_until'), 0) <= now then
  redis.call('HSET', KEYS[1], 'seed_until', now + seed_lease)
  role = 'seed'
end
local out = {role, now}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 4) == 'set:' then
    out[#out + 1] = string.sub(all[i], 5)
    out[#out + 1] = all[i + 1]
  end
end
return out

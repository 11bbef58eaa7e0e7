-- One server address's budget, across the job's workers (politeness per address: the names
-- on one server share it). KEYS: 1 state (hash: nb, the next start allowed; token; nb_before
-- and nb_token, to undo an unused start; starting and starting_token, a place won whose
-- request is not sent yet; row, back-offs in a row; backoffs), 2 open requests (zset: token
-- -> deadline, so a dead worker's place frees itself), 3 names failing since the address last
-- answered (set).
-- ARGV: 1 'acquire', 'started' or 'release', 2 max connections (0: no limit), 3 delay (ms),
-- 4 lease (ms), 5 first back-off (ms), 6 longest back-off (ms).
-- acquire, ARGV 7 the most places wanted: returns {'ok', now, token...} or {'wait', now, at}
-- (at -1: at its connection limit). With a delay, one place: no place is won while another's
-- request is about to be sent (until it is 'started', or a second has passed), so the delay
-- runs from when requests leave, not from when places are won. With none, up to the places
-- wanted, within the connections, and 'started' has nothing to do.
-- started, ARGV 7 token: the place's request is being sent now; returns {'ok', now}.
-- release, ARGV 7 token, 8 name, 9 outcome ('answered', 'throttled', 'failed' or 'none': no
-- request was made), 10 Retry-After (ms, or -1): returns {'ok', now, backed off (1 or 0)}.
local now = now_ms()
local max_conn, delay, lease = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local nb = num(redis.call('HGET', KEYS[1], 'nb'), 0)
if ARGV[1] == 'acquire' then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if max_conn > 0 and redis.call('ZCARD', KEYS[2]) >= max_conn then return {'wait', now, -1} end
  if nb > now then return {'wait', now, nb} end
  local starting = num(redis.call('HGET', KEYS[1], 'starting'), 0)
  if starting > now then return {'wait', now, math.min(starting, now + 5)} end
  local out = {'ok', now}
  if delay > 0 then
    -- One place: the next is won once this one's request is sent and the delay has run.
    local token = redis.call('HINCRBY', KEYS[1], 'token', 1)
    redis.call('ZADD', KEYS[2], now + lease, token)
    redis.call('HSET', KEYS[1], 'nb', math.max(nb, now + delay), 'nb_before', nb,
      'nb_token', token, 'starting', now + 1000, 'starting_token', token)
    out[3] = token
    return out
  end
  -- No delay: up to the count asked (ARGV 7), within the connections, and nothing to wait for
  -- between the requests' starts.
  local wanted = math.max(tonumber(ARGV[7] or '1'), 1)
  local open = redis.call('ZCARD', KEYS[2])
  while #out - 2 < wanted and (max_conn == 0 or open < max_conn) do
    local token = redis.call('HINCRBY', KEYS[1], 'token', 1)
    redis.call('ZADD', KEYS[2], now + lease, token)
    open = open + 1
    out[#out + 1] = token
  end
  return out
end
local token = ARGV[7]
if redis.call('HGET', KEYS[1], 'starting_token') == token then
  redis.call('HDEL', KEYS[1], 'starting', 'starting_token')
end
if ARGV[1] == 'started' then
  redis.call('HSET', KEYS[1], 'nb', math.max(nb, now + delay))
  return {'ok', now}
end
local name, outcome = ARGV[8], ARGV[9]
local retry_after = tonumber(ARGV[10])
redis.call('ZREM', KEYS[2], token)
if outcome == 'none' then
  -- No request was made: the start it reserved is given back, unless another came since.
  if redis.call('HGET', KEYS[1], 'nb_token') == token then
    redis.call('HSET', KEYS[1], 'nb', num(redis.call('HGET', KEYS[1], 'nb_before'), 0))
  end
  return {'ok', now, 0}
end
local wait, backed_off = delay, 0
if outcome == 'answered' then
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[1], 'row', 0)
else
  redis.call('SADD', KEYS[3], name)
  if redis.call('SCARD', KEYS[3]) >= 2 then
    redis.call('DEL', KEYS[3])
    local row = redis.call('HINCRBY', KEYS[1], 'row', 1)
    redis.call('HINCRBY', KEYS[1], 'backoffs', 1)
    local longest = tonumber(ARGV[6])
    local backoff = math.min(tonumber(ARGV[5]) * (2 ^ math.min(row - 1, 20)), longest)
    if retry_after >= 0 then backoff = math.max(math.min(retry_after, longest), backoff) end
    wait = math.max(backoff, delay)
    backed_off = 1
  end
end
redis.call('HSET', KEYS[1], 'nb', math.max(nb, now + wait))
-- A back-off or a delay set since is not to be undone by an unused start's release.
redis.call('HDEL', KEYS[1], 'nb_token')
return {'ok', now, backed_off}

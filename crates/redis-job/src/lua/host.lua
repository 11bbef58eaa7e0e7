-- Shared by the scripts of one host's slot. KEYS: 1 queue (zset: priority, then order), 2
-- entries (hash: key -> entry), 3 leases (zset: key -> deadline), 4 lease tokens (hash: key
-- -> 'token priority member'), 5 politeness (hash), 6 robots rules, 7 seen (set).
-- ARGV[1..11]: the job's settings (see Settings::host_args).
local S = {
  lease_ms = tonumber(ARGV[1]),
  max_conn = math.max(tonumber(ARGV[2]), 1),
  delay_ms = tonumber(ARGV[3]),
  max_crawl_delay_ms = tonumber(ARGV[4]),
  backoff_initial_ms = tonumber(ARGV[5]),
  backoff_max_ms = tonumber(ARGV[6]),
  max_failures = math.max(tonumber(ARGV[7]), 1),
  obey_robots = ARGV[8] == '1',
  robots_lease_ms = tonumber(ARGV[9]),
  robots_ttl_ms = tonumber(ARGV[10]),
  max_pages = tonumber(ARGV[11]),
}
local FIRST_ARG = 12

local function field(name, default)
  return num(redis.call('HGET', KEYS[5], name), default)
end

-- Leases past their deadline go back to the queue, at their old place.
local function reclaim(now)
  local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
  local n = 0
  for _, key in ipairs(expired) do
    local lease = redis.call('HGET', KEYS[4], key)
    if lease then
      local _, prio, member = string.match(lease, '^(%d+) (%S+) (.*)$')
      redis.call('ZADD', KEYS[1], prio, member)
      redis.call('HDEL', KEYS[4], key)
      n = n + 1
    end
    redis.call('ZREM', KEYS[3], key)
  end
  if n > 0 then
    redis.call('HSET', KEYS[5], 'active', math.max(field('active', 0) - n, 0))
    redis.call('HINCRBY', KEYS[5], 'reclaimed', n)
  end
  return n
end

-- The delay between two requests: the job's, or the robots.txt Crawl-delay if longer.
local function delay()
  return math.max(S.delay_ms, field('crawl_delay', 0))
end

-- After `fails` failures in a row: the job's initial back-off doubled per failure, capped.
local function backoff(fails)
  local exp = math.min(math.max(fails - 1, 0), 20)
  return math.max(math.min(S.backoff_initial_ms * (2 ^ exp), S.backoff_max_ms), delay())
end

-- When the host may next give work: -1 when it has nothing queued or leased, -2 when all it
-- has queued waits for the job's end (END_TIER) and nothing is leased.
local function hint(now)
  local first_lease = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  local lease_end = nil
  if #first_lease > 0 then lease_end = tonumber(first_lease[2]) end
  if redis.call('ZCARD', KEYS[1]) == 0 then
    return lease_end or -1
  end
  if field('parked', 0) == 1 then return now end
  if head() >= END_TIER then return lease_end or -2 end
  if field('active', 0) >= S.max_conn then return lease_end or now end
  return math.max(field('nb', 0), now)
end

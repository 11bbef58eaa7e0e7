-- Leases the host's next URLs, as many as politeness and robots.txt allow now, up to a count.
-- ARGV after the settings: '1' once the job's end is reached (URLs queued for it may be
-- leased), else '0'; then the most URLs to lease (at least one). Returns {'lease', now, key,
-- token, entry, hint, robots version, reclaimed, the priority of the next URL (-1: none), the
-- leased URL's priority, then key, token, entry, priority of each further URL leased},
-- {'spent', now, reclaimed} (the host's pages fetched and in flight reached
-- max_pages_per_host: the caller drains its queue),
-- {'robots', now, reclaimed} (the caller fetches robots.txt), {'parked', now, reclaimed},
-- {'wait', now, at, reclaimed} or {'empty', now, reclaimed}.
local now = now_ms()
local reclaimed = reclaim(now)
if redis.call('ZCARD', KEYS[1]) == 0 then
  local at = hint(now)
  if at < 0 then return {'empty', now, reclaimed} end
  return {'wait', now, at, reclaimed}
end
if field('parked', 0) == 1 then return {'parked', now, reclaimed} end
if S.max_pages > 0 and field('fetched', 0) + field('active', 0) >= S.max_pages then
  return {'spent', now, reclaimed}
end
if head() >= END_TIER and ARGV[FIRST_ARG] ~= '1' then
  -- What is queued waits for the job's end: the host waits for it (hint -2) or its leases.
  return {'wait', now, hint(now), reclaimed}
end
if S.obey_robots and field('robots_until', 0) <= now then
  local lease = field('robots_lease', 0)
  if lease > now then return {'wait', now, lease, reclaimed} end
  redis.call('HSET', KEYS[5], 'robots_lease', now + S.robots_lease_ms)
  return {'robots', now, reclaimed}
end
local active = field('active', 0)
if active >= S.max_conn then return {'wait', now, hint(now), reclaimed} end
local nb = field('nb', 0)
if nb > now then return {'wait', now, nb, reclaimed} end
local wanted = math.max(tonumber(ARGV[FIRST_ARG + 1] or '1'), 1)
local ending = ARGV[FIRST_ARG] == '1'
local leased = {}
-- Each further URL under the same checks as the first: a connection free, the delay run, the
-- host's page budget not reached, and not one waiting for the job's end (unless it came).
while #leased < wanted do
  if #leased > 0 then
    if active >= S.max_conn or nb > now or redis.call('ZCARD', KEYS[1]) == 0 then break end
    if S.max_pages > 0 and field('fetched', 0) + active >= S.max_pages then break end
    if head() >= END_TIER and not ending then break end
  end
  local popped = redis.call('ZPOPMIN', KEYS[1])
  local member, prio = popped[1], popped[2]
  local key = string.sub(member, 18)
  local entry = redis.call('HGET', KEYS[2], key)
  local token = redis.call('HINCRBY', KEYS[5], 'token', 1)
  redis.call('ZADD', KEYS[3], now + S.lease_ms, key)
  redis.call('HSET', KEYS[4], key, token .. ' ' .. prio .. ' ' .. member)
  active = active + 1
  nb = math.max(nb, now + delay())
  redis.call('HSET', KEYS[5], 'active', active, 'nb', nb)
  leased[#leased + 1] = {key, token, entry or '', tonumber(prio)}
end
local first = leased[1]
local out = {'lease', now, first[1], first[2], first[3], hint(now), field('robots_until', 0),
  reclaimed, head(), first[4]}
for i = 2, #leased do
  for _, v in ipairs(leased[i]) do out[#out + 1] = v end
end
return out

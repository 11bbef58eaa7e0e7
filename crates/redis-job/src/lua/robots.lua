-- The host's robots.txt was read (or could not be). ARGV after the settings: 'read' or
-- 'failed', the rules (opaque to Redis), the Crawl-delay (ms, or -1). Rules are kept for the
-- job's robots TTL; a failure backs the host off as a failed request does.
-- Returns {'ok', now, version, parked}: version = when the rules expire.
local now = now_ms()
local status, rules, crawl_delay = ARGV[FIRST_ARG], ARGV[FIRST_ARG + 1], tonumber(ARGV[FIRST_ARG + 2])
redis.call('HSET', KEYS[5], 'robots_lease', 0)
if status == 'read' then
  local until_ = now + S.robots_ttl_ms
  redis.call('SET', KEYS[6], rules)
  redis.call('HSET', KEYS[5], 'robots_until', until_,
    'crawl_delay', math.min(math.max(crawl_delay, 0), S.max_crawl_delay_ms))
  return {'ok', now, until_, field('parked', 0)}
end
local fails = field('fails', 0) + 1
local parked = field('parked', 0)
if fails >= S.max_failures then parked = 1 end
redis.call('HSET', KEYS[5], 'fails', fails, 'parked', parked,
  'nb', math.max(field('nb', 0), now + backoff(fails)))
return {'ok', now, 0, parked}

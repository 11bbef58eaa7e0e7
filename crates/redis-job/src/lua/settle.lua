-- The links parked on a decided URL were followed (or dropped) and its lease finished.
-- KEYS (the URL's host): decided, the URL's parked links. ARGV: the URL's key (hex). Once
-- the URL's entry is gone, park.lua answers 'decided' or 'hub' without the mark.
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1

-- The seeds of job KEYS[1] are all queued and announced.
redis.call('HSET', KEYS[1], 'seeded', 'done')
return now_ms()

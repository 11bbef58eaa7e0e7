-- Check-and-insert of a unique page into the shared near-duplicate index. KEYS: 1 the
-- index's version counter, 2 the page's hash, 3 its exact key, then its nb block keys (one
-- per fingerprint block) and its sentence keys. ARGV: 1 the version the page was judged
-- against, 2 nb, 3 the page's id, 4 its fingerprint (8 bytes), 5 '1' if it has an exact key,
-- 6 url, 7 verification text, 8 link keys, 9 worker, then one posting per sentence key.
--
-- Every block and sentence value starts with the 8-byte version of the admission that last
-- wrote it. If any of the page's keys was written after the version it was judged against,
-- a page that could be its original arrived meanwhile: nothing is written, and the caller
-- judges the page again. Of two near-duplicates admitted at once, exactly one is thus the
-- original. An id already admitted (a reply lost, the step repeated) answers as before.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'admitted', tonumber(redis.call('HGET', KEYS[2], 'seq'))}
end
local judged = tonumber(ARGV[1])
local nb = tonumber(ARGV[2])
local function version(head)
  local n = 0
  for i = 1, 8 do n = n * 256 + string.byte(head, i) end
  return n
end
local function be8(n)
  local t = {}
  for i = 8, 1, -1 do
    t[i] = string.char(n % 256)
    n = math.floor(n / 256)
  end
  return table.concat(t)
end
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then
  return {'conflict', KEYS[3]}
end
for i = 4, #KEYS do
  local head = redis.call('GETRANGE', KEYS[i], 0, 7)
  if #head == 8 and version(head) > judged then return {'conflict', KEYS[i]} end
end
local seq = redis.call('INCR', KEYS[1])
local ver = be8(seq)
local entry = ARGV[4] .. be8(tonumber(ARGV[3]))
for i = 4, 3 + nb do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('SETRANGE', KEYS[i], 0, ver)
    redis.call('APPEND', KEYS[i], entry)
  else
    redis.call('SET', KEYS[i], ver .. entry)
  end
end
for i = 4 + nb, #KEYS do
  redis.call('SET', KEYS[i], ver .. ARGV[10 + i - 4 - nb])
end
if ARGV[5] == '1' then redis.call('SET', KEYS[3], ARGV[3]) end
redis.call('HSET', KEYS[2], 'seq', seq, 'f', ARGV[4], 'u', ARGV[6], 't', ARGV[7],
  'l', ARGV[8], 'w', ARGV[9])
return {'admitted', seq}

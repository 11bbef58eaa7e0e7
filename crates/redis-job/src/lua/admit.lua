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
--
-- The keys are read with one MGET and written with one MSET (in groups, within what Lua's
-- unpack takes), not one call each: a page has dozens of sentence keys.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'admitted', tonumber(redis.call('HGET', KEYS[2], 'seq'))}
end
local judged = tonumber(ARGV[1])
local nb = tonumber(ARGV[2])
local GROUP = 1000
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
-- The values of KEYS[4..], read in groups; false where a key holds nothing.
local values = {}
for first = 4, #KEYS, GROUP do
  local last = math.min(first + GROUP - 1, #KEYS)
  local got = redis.call('MGET', unpack(KEYS, first, last))
  for i = 1, last - first + 1 do values[first + i - 4] = got[i] end
end
for i = 1, #KEYS - 3 do
  local v = values[i]
  if v and #v >= 8 and version(v) > judged then return {'conflict', KEYS[i + 3]} end
end
local seq = redis.call('INCR', KEYS[1])
local ver = be8(seq)
local entry = ARGV[4] .. be8(tonumber(ARGV[3]))
-- Each block's list gains the page; each sentence key holds its new posting.
local pairs_ = {}
for i = 1, #KEYS - 3 do
  local value
  if i <= nb then
    local old = values[i]
    if old and #old >= 8 then value = ver .. string.sub(old, 9) .. entry else value = ver .. entry end
  else
    value = ver .. ARGV[10 + i - 1 - nb]
  end
  pairs_[#pairs_ + 1] = KEYS[i + 3]
  pairs_[#pairs_ + 1] = value
  if #pairs_ >= 2 * GROUP then
    redis.call('MSET', unpack(pairs_))
    pairs_ = {}
  end
end
if #pairs_ > 0 then redis.call('MSET', unpack(pairs_)) end
if ARGV[5] == '1' then redis.call('SET', KEYS[3], ARGV[3]) end
redis.call('HSET', KEYS[2], 'seq', seq, 'f', ARGV[4], 'u', ARGV[6], 't', ARGV[7],
  'l', ARGV[8], 'w', ARGV[9])
return {'admitted', seq}

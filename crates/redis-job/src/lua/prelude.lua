-- Shared by every script: the server's clock in milliseconds, and small helpers.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function num(v, default)
  if v then return tonumber(v) end
  return default
end

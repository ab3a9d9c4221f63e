-- time.lua: `os.time()` and `os.date(format)` read the run's clock.
-- Uses only standard Lua 5.4.
--
-- The chunk takes `now`, the clock's wall time in whole seconds (the system's time in a normal
-- run, virtual time under `crescent test`). With an explicit time (`os.time{...}`,
-- `os.date(format, t)`) both are Lua's functions unchanged.

local now = ...
local time, date = os.time, os.date

os.time = function(fields)
  if fields == nil then return now() end
  return time(fields)
end

os.date = function(format, t)
  if t == nil then t = now() end
  return date(format, t)
end

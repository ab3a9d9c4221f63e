-- services.lua: the `__index` of the table of services made so far, behind `services`.
-- Uses only standard Lua 5.4.
--
-- The chunk takes the host's `start(byName, name)`, which makes the service, keeps it in
-- `byName` and returns it (or nothing and the failure), and `error`, taken before any script
-- could replace it. A task whose touch had to wait for the service (`start` answered nothing:
-- a plugin that starts in the background) touches it again once woken, to have it or its error,
-- raised at the script's line.

local start, error = ...

return function(byName, name)
  local service, failure = start(byName, name)
  if service == nil and failure == nil then service, failure = start(byName, name) end
  if failure ~= nil then error(failure, 2) end
  return service
end

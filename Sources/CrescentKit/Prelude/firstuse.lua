-- firstuse.lua: the stand-in global of a prelude module that loads on first use (`inspect`,
-- `json`). Uses only standard Lua 5.4.
--
-- The chunk takes a function that returns the module's chunk and the values that chunk takes.
-- It returns an empty table whose metamethods load the module the first time the table is
-- called, read, written, iterated or measured; they then copy the module's fields into the table
-- and give it the module's metatable, so from then on the table is the module (a reference taken
-- before, such as the REPL's or the `models` module's, reaches it as well).

local load_chunk = ...
local next, rawset, getmetatable, setmetatable = next, rawset, getmetatable, setmetatable
local stub, loaded = {}, false

local function run(chunk, ...) return chunk(...) end

local function module()
  if not loaded then
    loaded = true
    local real = run(load_chunk())
    setmetatable(stub, nil)
    for key, value in next, real do rawset(stub, key, value) end
    setmetatable(stub, getmetatable(real))
  end
  return stub
end

return setmetatable(stub, {
  __index = function(_, key) return module()[key] end,
  __newindex = function(_, key, value) module()[key] = value end,
  __call = function(_, ...) return module()(...) end,
  __pairs = function() return next, module(), nil end,
  __len = function() return #module() end,
})

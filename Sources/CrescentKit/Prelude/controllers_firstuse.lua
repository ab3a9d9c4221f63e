-- controllers_firstuse.lua: the controllers' stand-ins until a run first uses them. Uses only
-- standard Lua 5.4.
--
-- controllers.lua and its parts load when first needed rather than at start: most runs make no
-- controller. The chunk takes `loadChunk` (the host's loader of their chunks by part name,
-- `controllers` the first: `loadChunk(name, env)` answers as `load` does), the controllers'
-- primitives `P`, the table the host keeps the controllers' hooks in (filled when they load) and
-- the `app` table. Everything the host builds for the controllers (the primitives, these tables,
-- the chunks' bytecode as strings) is built at start; what loads later is Lua and the shim's C
-- only (undumping and running the chunks), so a load that fails (no memory left) is a Lua error
-- at the code that first used them, never a trap, and a later use tries again.
--
-- Until then `controller` and `help` are stand-ins that load the controllers and tail-call
-- theirs (the callee takes the stand-in's frame, so the levels its errors name are the same),
-- and `app` has a metatable that loads them on a read of a field it does not hold, a write, or
-- pairs. `app.args` is served here meanwhile, without loading anything: it is a plain value, and
-- the controllers serve it the same way (a write to it is refused, by them).
--
-- The chunks run as if they had loaded at start: the globals they read while loading are the
-- ones there were at start (a script's `task = 1` or `print = f` before its first controller
-- does not reach them), a global they set is set only if no script has replaced it since
-- (`controller` and `help` replace their stand-ins), and from then on they read and write the
-- globals as they are.
--
-- `P.onTeardown(f)` is Lua's too: it adds `f` to the list this chunk returns, which the host
-- runs at every teardown, last added first.
--
-- Returns the function that loads the controllers (and returns the hooks), for the host's own
-- first use; the message handlers' errorText until then; the list of teardown functions.
local loadChunk, P, hooks, app = ...
local pcall, error, tostring, type = pcall, error, tostring, type
local getmetatable, setmetatable, rawget, rawset, rawequal, next = getmetatable, setmetatable, rawget, rawset, rawequal, next
local G = _ENV

local PARTS = { "mistakes", "navigation", "commands", "keys", "helpers" }

local teardowns = {}
function P.onTeardown(f) teardowns[#teardowns + 1] = f end

-- The globals as they are now, before any script ran; the stand-ins put in their place, and
-- the controllers' own values of those globals once they have loaded.
local atStart, standIns, own = {}, {}, {}
for name, value in next, G do atStart[name] = value end
-- app's own fields now (the host's): a load that fails leaves app with these only.
local appFields = {}
for name in next, app do appFields[name] = true end

-- The controllers' _ENV: while they load, it reads the globals of the start and sets only the
-- ones no script replaced; then it is the globals themselves.
local whileLoading = {
  __index = atStart,
  __newindex = function(_, name, value)
    local current = rawget(G, name)
    if rawequal(current, atStart[name]) or (standIns[name] ~= nil and rawequal(current, standIns[name])) then rawset(G, name, value) end
    -- What the stand-ins call: the controllers' own, though a script may have replaced the global.
    if standIns[name] ~= nil then own[name] = value end
  end,
}
local env = setmetatable({}, whileLoading)
local loaded = { __index = G, __newindex = G }

local state = "waiting"        -- then "loading", then "loaded"
local args = rawget(app, "args")
rawset(app, "args", nil)
local standIn

local function compiled(name)
  local chunk, message = loadChunk(name, env)
  if not chunk then error(message, 0) end
  return chunk
end

local function run()
  state = "loading"
  setmetatable(app, nil)
  rawset(app, "args", args)
  local parts = {}
  for _, part in next, PARTS do parts[part] = compiled(part) end
  P.parts = parts
  local given = compiled("controllers")(P)
  for name, value in next, given do rawset(hooks, name, value) end
  setmetatable(env, loaded)
  state = "loaded"
end

-- Loads the controllers if they have not loaded; returns the hooks. A failure (not enough
-- memory, an interrupt) undoes what the load did and raises at `level` (a stand-in's caller).
-- The load changes nothing before it runs protected, and the undo allocates nothing, so a
-- failure anywhere leaves the stand-ins as they were.
local function ensure(level)
  if state == "loaded" then return hooks end
  if state == "loading" then error("the controllers are loading", (level or 1) + 1) end
  local ok, message = pcall(run)
  if ok then
    atStart = nil
    return hooks
  end
  for name in next, app do if not appFields[name] then rawset(app, name, nil) end end
  rawset(app, "args", nil)
  setmetatable(app, standIn)
  for name in next, hooks do rawset(hooks, name, nil) end
  for i = #teardowns, 1, -1 do teardowns[i] = nil end
  for name, stub in next, standIns do
    if own[name] ~= nil and rawequal(rawget(G, name), own[name]) then rawset(G, name, stub) end
    own[name] = nil
  end
  P.parts = nil
  state = "waiting"
  error("cannot load the controllers: " .. tostring(message), (level or 1) + 1)
end

-- app's metatable until then; after the load, what the controllers' own metatable does with
-- the key: a tail call, so that its errors name the line of the code that read or wrote.
standIn = {
  __index = function(t, key)
    if key == "args" then return args end
    ensure(2)
    local value = rawget(t, key)
    if value ~= nil then return value end
    local meta = getmetatable(t)
    local index = meta and meta.__index
    if type(index) == "function" then return index(t, key) end
    if index ~= nil then return index[key] end
    return nil
  end,
  __newindex = function(t, key, value)
    ensure(2)
    local meta = getmetatable(t)
    local newindex = rawget(t, key) == nil and meta and meta.__newindex
    if type(newindex) == "function" then return newindex(t, key, value) end
    if newindex then
      newindex[key] = value
      return
    end
    rawset(t, key, value)
  end,
  __pairs = function(t)
    ensure(2)
    return next, t, nil
  end,
}
setmetatable(app, standIn)

standIns.controller = function(...)
  ensure(2)
  return own.controller(...)
end
rawset(G, "controller", standIns.controller)
local help = atStart.help
if type(help) == "function" then
  standIns.help = function(...)
    ensure(2)
    return (own.help or help)(...)
  end
  rawset(G, "help", standIns.help)
end

-- The wording of error values before the controllers load: a string or number gets a hint only
-- from a controller class or instance, so there is none; any other value (a table raised with
-- error()) is worded by theirs (a tail call: the levels it searches stay the handler's), or
-- shown plainly when they cannot load.
local function errorText(value, thread)
  if state ~= "loaded" then
    local kind = type(value)
    if kind == "string" or kind == "number" or state == "loading" or not pcall(ensure) then return nil end
  end
  return hooks.errorText(value, thread)
end

return ensure, errorText, teardowns

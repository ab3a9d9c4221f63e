-- controllers_firstuse.lua: the controllers' stand-ins until a run first uses them. Uses only
-- standard Lua 5.4.
--
-- controllers.lua and its parts load when first needed rather than at start: most runs make no
-- controller. The chunk takes `load` (the host's: returns the controllers' chunk and its table of
-- primitives), `loaded` (the host's: takes the hooks that chunk returns), the `app` table and
-- the `help` and `inspect` globals as they are before any script runs (the controllers' parts
-- take these, not what a script may have put in their place since).
--
-- Until then `controller` and `help` are stand-ins that load the controllers and tail-call
-- theirs (the callee takes the stand-in's frame, so the levels its errors name are the same),
-- and `app` has a metatable that loads them on a read of a field it does not hold, a write of a
-- new one, or pairs; `app.args` waits here meanwhile, since the controllers serve it (a write
-- to it is refused). The controllers' chunk defines its globals through `P.define`, which sets
-- one only while the stand-in still holds it: what a script put there stays.
--
-- Returns the function that loads the controllers (and returns their hooks), for the host's
-- own first use, and the message handlers' errorText until then.
local load, loaded, app, help, inspect = ...
local type, getmetatable, setmetatable, rawget, rawset, next = type, getmetatable, setmetatable, rawget, rawset, next
local G = _ENV

local hooks           -- nil until loading starts, false while it runs, then the controllers' hooks
local stubs, real = {}, {}
local args = rawget(app, "args")
rawset(app, "args", nil)
local standIn

local function ensure()
  if hooks == nil then
    hooks = false
    if getmetatable(app) == standIn then setmetatable(app, nil) end
    rawset(app, "args", args)
    local chunk, P = load()
    P.help, P.inspect = help, inspect
    P.define = function(name, value)
      real[name] = value
      if rawget(G, name) == stubs[name] then rawset(G, name, value) end
    end
    hooks = chunk(P)
    loaded(hooks)
  end
  return hooks
end

-- After the load, what the controllers' own metatable does with the key: a tail call, so that
-- its errors name the line of the code that read or wrote.
standIn = {
  __index = function(t, key)
    ensure()
    local value = rawget(t, key)
    if value ~= nil then return value end
    local meta = getmetatable(t)
    local index = meta and meta.__index
    if type(index) == "function" then return index(t, key) end
    if index ~= nil then return index[key] end
    return nil
  end,
  __newindex = function(t, key, value)
    ensure()
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
    ensure()
    return next, t, nil
  end,
}
setmetatable(app, standIn)

stubs.controller = function(...)
  ensure()
  return real.controller(...)
end
rawset(G, "controller", stubs.controller)
if type(help) == "function" then
  stubs.help = function(...)
    ensure()
    return (real.help or help)(...)
  end
  rawset(G, "help", stubs.help)
end

-- The wording of error values before the controllers load: a string or number gets a hint only
-- from a controller class or instance, so there is none; any other value (a table raised with
-- error()) is worded by theirs (a tail call: the levels it searches stay the handler's).
local function errorText(value, thread)
  if not hooks then
    local kind = type(value)
    if kind == "string" or kind == "number" or hooks == false then return nil end
    ensure()
  end
  return hooks.errorText(value, thread)
end

return ensure, errorText

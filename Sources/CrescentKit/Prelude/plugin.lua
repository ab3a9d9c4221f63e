-- plugin.lua: the globals a Lua plugin declares its services with.
-- Uses only standard Lua 5.4.
--
-- `service(name, summary)` and its `property`, `method`, `event`, `set` and `emit`, and
-- `service_error(code, message)`, written in Lua over a few native primitives (as mpv writes its
-- API). The chunk takes the primitives (`declare`, `property`, `method`, `event`, `get`, `set`,
-- `emit`) and the set of error codes, defines the globals and returns `invoke(service, method, ...)`,
-- which runs a declared method, and `classify(err)`, the code and message of an error that is a
-- service error.

local native, codes, plugin_name = ...
-- What DESIGN.md (Plugins > Permissions) keeps from a plugin: `debug` (a hook could hold the
-- host's one loop past every limit), `os.exit` (it would end the host with no teardown) and
-- `collectgarbage("stop")` (the memory limit is the plugin's bound, not a pause of collection).
debug = nil
package.loaded.debug = nil
os.exit = function()
  error(("os.exit is not available in plugin '%s': a plugin cannot end the host (raise service_error(code, message) to fail a call)"):format(plugin_name), 2)
end
local collect = collectgarbage
collectgarbage = function(option, ...)
  if option == "stop" then
    error(("collectgarbage(\"stop\") is not available in plugin '%s': the host collects a plugin's garbage (use collectgarbage(\"collect\") or \"step\")"):format(plugin_name), 2)
  end
  return collect(option, ...)
end
local methods = {}
local Service = { __name = "PluginService" }
-- A service object reads its own properties as scripts do (`places.near`): the value last set,
-- from the one place values are kept. The methods come first; a name that is neither reads nil.
Service.__index = function(self, key)
  local method = Service[key]
  if method ~= nil then return method end
  return native.get(rawget(self, "name"), key)
end
local function check(value, kind, position, name)
  if type(value) ~= kind then
    error(("bad argument #%d to '%s' (%s expected, got %s)"):format(position, name, kind, type(value)), 3)
  end
end
function service(name, summary)
  check(name, "string", 1, "service")
  native.declare(name, summary == nil and "" or tostring(summary))
  methods[name] = {}
  return setmetatable({ name = name }, Service)
end
-- A property reads as a field of the service object (`s.level`): one named like the object's own
-- API (`name`, `set`, `emit`, ...) would be shadowed by it inside the plugin.
local function unshadowed(self, what, name)
  if name == "name" or Service[name] ~= nil then
    error(("%s '%s' of service '%s' clashes with the service object's own '%s' (pick another name)"):format(what, name, self.name, name), 3)
  end
end
function Service:property(name, kind, doc, initial)
  check(name, "string", 1, "property")
  unshadowed(self, "property", name)
  check(kind, "string", 2, "property")
  native.property(self.name, name, kind, doc == nil and "" or tostring(doc), initial)
end
function Service:method(name, args, returns, doc, fn)
  check(name, "string", 1, "method")
  check(args, "table", 2, "method")
  check(fn, "function", 5, "method")
  native.method(self.name, name, args, returns == nil and "nil" or tostring(returns), doc == nil and "" or tostring(doc))
  methods[self.name][name] = fn
end
function Service:event(name, payload, doc)
  check(name, "string", 1, "event")
  native.event(self.name, name, payload == nil and "nil" or tostring(payload), doc == nil and "" or tostring(doc))
end
function Service:set(key, value) return native.set(self.name, key, value) end
function Service:emit(event, payload) return native.emit(self.name, event, payload) end
local ServiceError = { __name = "ServiceError" }
ServiceError.__tostring = function(e) return e.code .. ": " .. e.message end
function service_error(code, message)
  if not codes[code] then
    local names = {}
    for name in pairs(codes) do names[#names + 1] = name end
    table.sort(names)
    error(("service_error: unknown code '%s' (codes: %s)"):format(tostring(code), table.concat(names, ", ")), 2)
  end
  return setmetatable({ code = code, message = message == nil and code or tostring(message) }, ServiceError)
end
local function invoke(service, method, ...)
  return methods[service][method](...)
end
-- The code and message of an error that is a service error (service_error's, or one a
-- service call answered and the plugin raised again); nothing for any other error.
local function classify(err)
  if type(err) == "table" and type(err.code) == "string" and codes[err.code] then
    return err.code, tostring(err.message)
  end
end
return invoke, classify

-- plugin.lua: the globals a Lua plugin declares its services with.
-- Uses only standard Lua 5.4.
--
-- `service(name, summary)` and its `property`, `method`, `event`, `set` and `emit`, and
-- `service_error(code, message)`, written in Lua over a few native primitives (as mpv writes its
-- API). The chunk takes the primitives (`declare`, `property`, `method`, `event`, `get`, `set`,
-- `emit`) and the set of error codes, defines the globals and returns `invoke(service, method, ...)`,
-- which runs a declared method, and `classify(err)`, the code and message of an error that is a
-- service error.

local native, codes, plugin_name, policy = ...
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

-- The permissions (DESIGN.md, Plugins > Permissions): every way to reach a file, a program or
-- the environment is wrapped to the plugin's grant. `policy.check(path, access)` resolves the path
-- as the kernel will (symlinks, `..`, /proc/self/root) and answers true or nil and the message.
-- A refused call raises where the plugin made it (level 3: past this wrapper and `guard`).
local check, refused, env_granted, exec_granted = policy.check, policy.refused, policy.env, policy.exec
local function guard(path, access, what)
  if type(path) == "number" then path = tostring(path) end  -- Lua's own coercion, checked too
  if type(path) ~= "string" then return end            -- the original raises its own bad argument
  local ok, message = check(path, access)
  if not ok then error(what .. ": " .. message, 3) end
end
local function unavailable(what, why)
  return function()
    local message = ("%s is not available in plugin '%s': %s"):format(what, plugin_name, why)
    refused(message)
    error(message, 2)
  end
end
local not_granted = "not granted (add it to [permissions] %s in its plugin.toml, then run crescent plugins allow %s)"
-- A command line is run only when it is plain words (no shell syntax) whose first word is a
-- granted program: the shell would otherwise run whatever follows a `;` or `$(`.
local function guard_command(command, what)
  if type(command) == "number" then command = tostring(command) end
  if type(command) ~= "string" then return end
  local program = command:match("^%s*([^%s]+)")
  local plain = not command:find("[;&|$`<>()\\\n*?{}!#~'\"]")
  if not (plain and program and exec_granted[program]) then
    local message = ("%s: permission: plugin '%s' may not run %q: %s"):format(what, plugin_name, command,
      not plain and "only plain words can run (no shell syntax)" or not_granted:format("exec", plugin_name))
    refused(message)
    error(message, 3)
  end
end
do
  local open, lines, popen, execute = io.open, io.lines, io.popen, os.execute
  local remove, rename, tmpname, getenv = os.remove, os.rename, os.tmpname, os.getenv
  local raw_loadfile, raw_dofile = loadfile, dofile
  io.open = function(path, mode, ...)
    local writes = type(mode) == "string" and mode:find("[wa+]") ~= nil
    guard(path, writes and "write" or "read", ("io.open(%q)"):format(tostring(path)))
    return open(path, mode, ...)
  end
  io.lines = function(path, ...)
    if path == nil then return unavailable("io.lines() of stdin", "a plugin has no stdin")() end
    guard(path, "read", ("io.lines(%q)"):format(tostring(path)))
    return lines(path, ...)
  end
  io.popen = function(command, ...)
    guard_command(command, "io.popen")
    return popen(command, ...)
  end
  os.execute = function(command, ...)
    if command == nil then return false end            -- "is a shell available?": not to a plugin
    guard_command(command, "os.execute")
    return execute(command, ...)
  end
  -- The host's standard streams are the host's: a plugin logs with `log` (or `print`).
  for _, name in ipairs({ "input", "output", "read", "write" }) do
    io[name] = unavailable("io." .. name, "the host's standard streams are not a plugin's (use log or print)")
  end
  io.stdin, io.stdout, io.stderr = nil, nil, nil
  os.remove = function(path, ...)
    guard(path, "write", ("os.remove(%q)"):format(tostring(path)))
    return remove(path, ...)
  end
  os.rename = function(from, to, ...)
    guard(from, "write", ("os.rename(%q, ...)"):format(tostring(from)))
    guard(to, "write", ("os.rename(..., %q)"):format(tostring(to)))
    return rename(from, to, ...)
  end
  os.tmpname = function()
    local name = tmpname()
    local ok, message = check(name, "write")
    if not ok then
      remove(name)
      error("os.tmpname: " .. message, 2)
    end
    return name
  end
  os.getenv = function(name, ...)
    if type(name) == "number" then name = tostring(name) end
    if type(name) == "string" and not env_granted[name] then
      local message = ("os.getenv(%q): permission: plugin '%s' may not read environment variable %s: %s"):format(
        name, plugin_name, name, not_granted:format("env", plugin_name))
      refused(message)
      error(message, 2)
    end
    return getenv(name, ...)
  end
  loadfile = function(path, ...)
    if path == nil then return unavailable("loadfile() of stdin", "a plugin has no stdin")() end
    guard(path, "read", ("loadfile(%q)"):format(tostring(path)))
    return raw_loadfile(path, ...)
  end
  dofile = function(path, ...)
    if path == nil then return unavailable("dofile() of stdin", "a plugin has no stdin")() end
    guard(path, "read", ("dofile(%q)"):format(tostring(path)))
    return raw_dofile(path, ...)
  end
  -- require finds Lua files on package.path and loads those the plugin may read; C modules only
  -- with `native = true` (they run with all of the host's rights).
  local searchpath, c_path = package.searchpath, package.cpath
  local function lua_searcher(name)
    local file, tried = searchpath(name, package.path)
    if not file then return "\n\t" .. tostring(tried) end
    local ok, message = check(file, "read")
    if not ok then
      refused(message)
      return "\n\tno file '" .. file .. "' (" .. message .. ")"
    end
    local chunk, problem = raw_loadfile(file, "t")
    if not chunk then error(("error loading module '%s' from file '%s':\n\t%s"):format(name, file, problem), 2) end
    return chunk, file
  end
  if not policy.native then
    local function c_searcher(name)
      local found = searchpath(name, c_path) or searchpath((name:match("^([^.]*)")), c_path)
      if found then
        local message = ("require(%q): C modules are not available in plugin '%s': they would run with all of the host's rights (native = true in [permissions] grants them, shown as full access)"):format(name, plugin_name)
        refused(message)
        error(message, 3)
      end
      return "\n\tno C module '" .. name .. "' (C modules are not available in plugins without native = true)"
    end
    package.searchers = { package.searchers[1], lua_searcher, c_searcher }
    package.loadlib = nil
    package.cpath = ""
  else
    package.searchers[2] = lua_searcher
  end
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

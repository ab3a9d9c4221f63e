-- plugin.lua: the globals a Lua plugin declares its services with.
-- Uses only standard Lua 5.4.
--
-- `service(name, summary)` and its `property`, `method`, `event`, `set` and `emit`, and
-- `service_error(code, message)`, written in Lua over a few native primitives (as mpv writes its
-- API). The chunk takes the primitives (`declare`, `property`, `method`, `event`, `get`, `no_member`, `set`,
-- `emit`), the set of error codes, the plugin's name, its permission policy and its settings, defines the globals and returns `invoke(service, method, ...)`,
-- which runs a declared method, and `classify(err)`, the code and message of an error that is a
-- service error.

local native, codes, plugin_name, policy, plugin_settings = ...
-- `settings` is the plugin's section with defaults applied; a key its plugin.toml does not declare
-- raises where it is read (a misspelled `settings.greting` read nil without a word), naming the
-- declared settings.
settings = setmetatable(type(plugin_settings) == "table" and plugin_settings or {}, {
  __index = function(_, key)
    local message = native.no_setting(tostring(key))
    if message then error(message, 2) end
  end,
})
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
-- Files are never opened by name after that check (a link swapped in between would lead
-- elsewhere): `policy.open`, `remove` and `rename` open beneath the granted folder, the kernel
-- refusing any step out of it, and `policy.file` makes the descriptor an io handle. Programs run
-- without a shell, confined like a process plugin (`policy.spawn`, `policy.execute`).
-- A refused call raises where the plugin made it (the level counts the wrappers in between;
-- the calls to them are never tail calls, which would drop a level).
local check, refused, env_granted, exec_granted = policy.check, policy.refused, policy.env, policy.exec
local open_at, remove_at, rename_at, file_of = policy.open, policy.remove, policy.rename, policy.file
local tmpfile_at = policy.tmpfile
local spawn, run = policy.spawn, policy.execute
local function unavailable(what, why)
  return function()
    local message = ("%s is not available in plugin '%s': %s"):format(what, plugin_name, why)
    refused(message)
    error(message, 2)
  end
end
-- No finalizers: Lua runs a __gc with hooks off, so one that never returns held the host's loop
-- for ever (call_timeout, the interrupt and `plugin check` could not end it). Lua marks an object
-- for finalization only when its metatable has a __gc field at setmetatable, so a metatable
-- holding one (even `true`, to be replaced later) is refused there; getmetatable hands out a copy
-- of a library's metatable holding one (an io file's), whose __gc could otherwise be replaced.
do
  local raw_setmetatable, raw_getmetatable, raw_next = setmetatable, getmetatable, next
  setmetatable = function(value, metatable, ...)
    if type(metatable) == "table" and rawget(metatable, "__gc") ~= nil then
      local message = ("setmetatable: a metatable with __gc is not available in plugin '%s': a finalizer runs where no time limit can stop it (close files and other resources explicitly, or with a to-be-closed variable: local f <close> = ...)"):format(plugin_name)
      refused(message)
      error(message, 2)
    end
    return raw_setmetatable(value, metatable, ...)
  end
  getmetatable = function(value, ...)
    local metatable = raw_getmetatable(value, ...)
    if type(metatable) ~= "table" or rawget(metatable, "__gc") == nil then return metatable end
    local copy = {}
    for key, field in raw_next, metatable do copy[key] = field end
    return copy
  end
end
local not_granted = "not granted (add it to [permissions] %s in its plugin.toml, then run crescent plugins allow %s)"
-- A command line is run only when it is plain words (no shell syntax) whose first word is a
-- granted program: no shell runs it, and `;` or `$(` would mean one.
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
-- The plugin's open files and io.popen handles, each a descriptor of the host's: at most
-- `max_handles` open at once (the open-file limit a process plugin gets), so a plugin keeping
-- every handle it opens cannot take all the host's descriptors (other plugins, the store).
-- Weak: a handle dropped without close is closed by the collector, which runs before a refusal.
local max_handles, live_handles = 256, setmetatable({}, { __mode = "k" })
local io_type = io.type
local too_many = 24                                     -- EMFILE, as the system's own refusal
local function open_handles()
  local count = 0
  for handle in pairs(live_handles) do
    if io_type(handle) == "file" then count = count + 1 else live_handles[handle] = nil end
  end
  return count
end
-- Nil when one more handle may open, else the message (after a collection).
local function handle_limit(what)
  if open_handles() < max_handles then return nil end
  collect("collect")
  if open_handles() < max_handles then return nil end
  return ("%s: plugin '%s' has %d files and programs open, the most a plugin may hold: close those it no longer needs (file:close())"):format(what, plugin_name, max_handles)
end
local function kept(file, ...)
  if file then live_handles[file] = true end
  return file, ...
end
-- Opens `path` as io.open's `mode` (checked already): the handle, or nil, the system's message
-- and errno; a refusal raises at `level` (counted from here).
local function open_file(path, mode, what, level)
  local full = handle_limit(what)
  if full then return nil, full, too_many end
  local fd, message, code = open_at(path, mode)
  if not fd then
    if code == nil then error(what .. ": " .. message, level) end
    return nil, message, code
  end
  local file, problem, errno = file_of(fd, mode)
  if not file then return nil, ("%s: %s"):format(what, problem), errno end
  return kept(file)
end
local load = load
-- loadfile's work, reading through open_file: a first line starting with `#` and a UTF-8 byte
-- order mark are skipped as Lua's own loadfile skips them (the line kept, for line numbers).
local function load_file(path, mode, env, has_env, what, level)
  local file, message = open_file(path, "r", what, level + 1)
  if not file then return nil, "cannot open " .. message end
  local source, problem = file:read("a")
  file:close()
  if not source then return nil, "cannot read " .. path .. ": " .. tostring(problem) end
  if source:sub(1, 3) == "\239\187\191" then source = source:sub(4) end
  if source:sub(1, 1) == "#" then source = "--" .. source end
  if has_env then return load(source, "@" .. path, mode, env) end
  return load(source, "@" .. path, mode)
end
do
  local open, lines, popen, execute = io.open, io.lines, io.popen, os.execute
  local remove, rename, tmpname, getenv = os.remove, os.rename, os.tmpname, os.getenv
  local raw_loadfile = loadfile
  local pack, unpack = table.pack, table.unpack
  io.open = function(path, mode, ...)
    if type(path) == "number" then path = tostring(path) end  -- Lua's own coercion, checked too
    local given = mode == nil and "r" or mode
    if type(path) ~= "string" or type(given) ~= "string" or not given:find("^[rwa]%+?b*$") then
      return open(path, mode, ...)                      -- raises its own bad argument, opens nothing
    end
    local file, message, code = open_file(path, given, ("io.open(%q)"):format(path), 3)
    return file, message, code
  end
  io.lines = function(path, ...)
    if path == nil then return unavailable("io.lines() of stdin", "a plugin has no stdin")() end
    if type(path) == "number" then path = tostring(path) end
    if type(path) ~= "string" then return lines(path, ...) end
    local file, message = open_file(path, "r", ("io.lines(%q)"):format(path), 3)
    if not file then error(message, 2) end
    local next_line = file:lines(...)
    -- As io.lines: the file closes at its end, and when a for loop leaves early (4th value).
    return function()
      local results = pack(next_line())
      if results[1] == nil then file:close() end
      return unpack(results, 1, results.n)
    end, nil, nil, file
  end
  io.popen = function(command, mode, ...)
    guard_command(command, "io.popen")
    if type(command) == "number" then command = tostring(command) end
    if type(command) ~= "string" or (mode ~= nil and mode ~= "r" and mode ~= "w") then
      return popen(command, mode, ...)                  -- raises its own bad argument, runs nothing
    end
    local full = handle_limit(("io.popen(%q)"):format(command))
    if full then return nil, full, too_many end
    local fd, pid, was_refused = spawn(command, mode or "r")
    if not fd then
      if was_refused then error(pid, 2) end
      return nil, pid
    end
    local file, message, code = file_of(fd, mode or "r", pid)
    if not file then return nil, ("io.popen(%q): %s"):format(command, message), code end
    return kept(file)
  end
  os.execute = function(command, ...)
    if command == nil then return false end            -- "is a shell available?": not to a plugin
    guard_command(command, "os.execute")
    if type(command) == "number" then command = tostring(command) end
    if type(command) ~= "string" then return execute(command, ...) end
    local ok, kind, code = run(command)
    if ok == "refused" then error(kind, 2) end
    if ok == "failed" then
      refused(kind)
      return nil, "exit", 127
    end
    return ok, kind, code
  end
  -- The host's standard streams are the host's: a plugin logs with `log` (or `print`).
  for _, name in ipairs({ "input", "output", "read", "write" }) do
    io[name] = unavailable("io." .. name, "the host's standard streams are not a plugin's (use log or print)")
  end
  io.stdin, io.stdout, io.stderr = nil, nil, nil
  os.remove = function(path, ...)
    if type(path) == "number" then path = tostring(path) end
    if type(path) ~= "string" then return remove(path, ...) end
    local ok, message, code = remove_at(path)
    if ok then return true end
    if code == nil then error(("os.remove(%q): %s"):format(path, message), 2) end
    return nil, message, code
  end
  os.rename = function(from, to, ...)
    if type(from) == "number" then from = tostring(from) end
    if type(to) == "number" then to = tostring(to) end
    if type(from) ~= "string" or type(to) ~= "string" then return rename(from, to, ...) end
    local ok, message, code = rename_at(from, to)
    if ok then return true end
    if code == nil then error(("os.rename(%q, %q): %s"):format(from, to, message), 2) end
    return nil, message, code
  end
  -- An unnamed file in the plugin's data folder (Lua's own is made in /tmp, outside its grants).
  io.tmpfile = function()
    local full = handle_limit("io.tmpfile()")
    if full then return nil, full, too_many end
    local fd, message, code = tmpfile_at()
    if not fd then
      if code == nil then error("io.tmpfile(): " .. message, 2) end
      return nil, message, code
    end
    local file, problem, errno = file_of(fd, "w+")
    if not file then return nil, ("io.tmpfile(): %s"):format(problem), errno end
    return kept(file)
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
  loadfile = function(path, mode, ...)
    if path == nil then return unavailable("loadfile() of stdin", "a plugin has no stdin")() end
    if type(path) == "number" then path = tostring(path) end
    if type(path) ~= "string" then return raw_loadfile(path, mode, ...) end
    local chunk, message = load_file(path, mode, ..., select("#", ...) > 0, ("loadfile(%q)"):format(path), 3)
    return chunk, message
  end
  dofile = function(path)
    if path == nil then return unavailable("dofile() of stdin", "a plugin has no stdin")() end
    if type(path) == "number" then path = tostring(path) end
    if type(path) ~= "string" then return raw_loadfile(path) end
    local chunk, message = load_file(path, "t", nil, false, ("dofile(%q)"):format(path), 3)
    if not chunk then error(message, 0) end
    return chunk()
  end
  -- package.searchpath as Lua's, but it looks only at the files the plugin may read: one
  -- outside its grants is "not granted" whether it exists or not, so no search tells the plugin
  -- what exists where it may not look.
  local searchpath, c_path = package.searchpath, package.cpath
  local function search(name, path, separator, replacement)
    if type(name) == "number" then name = tostring(name) end
    if type(path) == "number" then path = tostring(path) end
    if type(name) ~= "string" or type(path) ~= "string" then return searchpath(name, path, separator, replacement) end
    separator, replacement = separator or ".", replacement or "/"
    if separator ~= "" then
      name = name:gsub(separator:gsub("%p", "%%%0"), (replacement:gsub("%%", "%%%%")))
    end
    local tried = {}
    for template in path:gmatch("[^;]+") do
      local file = template:gsub("%?", (name:gsub("%%", "%%%%")))
      if check(file, "read", true) then
        local fd = open_at(file, "r")
        if fd then
          local opened = file_of(fd, "r")
          if opened then opened:close() end
          return file
        end
        tried[#tried + 1] = "no file '" .. file .. "'"
      else
        tried[#tried + 1] = "no file '" .. file .. "' (not granted)"
      end
    end
    return nil, table.concat(tried, "\n\t")
  end
  package.searchpath = search
  -- require finds Lua files on package.path and loads those the plugin may read; C modules only
  -- with `native = true` (they run with all of the host's rights).
  local function lua_searcher(name)
    local file, tried = search(name, package.path)
    if not file then return "\n\t" .. tostring(tried) end
    local chunk, problem = load_file(file, "t", nil, false, ("require(%q)"):format(name), 4)
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
-- from the one place values are kept. The methods come first; a name that is neither (a
-- misspelled `s:mehtod(...)`) raises at the plugin's line, naming both with the closest one.
Service.__index = function(self, key)
  local method = Service[key]
  if method ~= nil then return method end
  local name = rawget(self, "name")
  local value = native.get(name, key)
  if value == nil then
    local missing = native.no_member(name, key)
    if missing then error(missing, 2) end
  end
  return value
end
local function check(value, kind, position, name)
  if type(value) ~= kind then
    error(("bad argument #%d to '%s' (%s expected, got %s)"):format(position, name, kind, type(value)), 3)
  end
end
-- Calls a native primitive for a method of the service object: its error is raised at the
-- plugin's line that called the method (it named this file's line, [crescent plugin]:327), and
-- a call with '.' for ':' says so. Called, never tail-called, by the method: level 3 is the
-- plugin's code.
local pack, unpack = table.pack, table.unpack
local function own(self, name, level)
  if getmetatable(self) ~= Service then
    error(("%s(...): call it with ':' on the service object (svc:%s(...)), got %s as self"):format(name, name, type(self)), level)
  end
end
local function forward(self, name, f, ...)
  own(self, name, 4)
  local results = pack(pcall(f, self.name, ...))
  if not results[1] then error(results[2], 3) end
  return unpack(results, 2, results.n)
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
  own(self, "property", 3)
  check(name, "string", 1, "property")
  unshadowed(self, "property", name)
  check(kind, "string", 2, "property")
  forward(self, "property", native.property, name, kind, doc == nil and "" or tostring(doc), initial)
end
-- A function given where another part belongs (the doc left out) said only "bad argument #5
-- (function expected, got nil)": the signature and the part missing are named instead.
local method_signature = "method(name, args, returns, doc, fn)"
function Service:method(name, args, returns, doc, fn)
  own(self, "method", 3)
  check(name, "string", 1, "method")
  check(args, "table", 2, "method")
  if type(fn) ~= "function" then
    local missing
    if type(doc) == "function" and fn == nil then
      missing = "the doc string is missing"
    elseif type(returns) == "function" and doc == nil and fn == nil then
      missing = "the return type and the doc string are missing"
    end
    if missing then
      error(("%s:%s: %s (the function came before it): write %s:method(%q, args, returns, \"What it does.\", function(...) ... end)")
        :format(self.name, method_signature, missing, self.name, name), 2)
    end
    error(("bad argument #5 to 'method' (function expected, got %s): %s:%s"):format(type(fn), self.name, method_signature), 2)
  end
  forward(self, "method", native.method, name, args, returns == nil and "nil" or tostring(returns), doc == nil and "" or tostring(doc))
  methods[self.name][name] = fn
end
function Service:event(name, payload, doc)
  own(self, "event", 3)
  check(name, "string", 1, "event")
  forward(self, "event", native.event, name, payload == nil and "nil" or tostring(payload), doc == nil and "" or tostring(doc))
end
function Service:set(key, value)
  forward(self, "set", native.set, key, value)
end
function Service:emit(event, payload)
  forward(self, "emit", native.emit, event, payload)
end
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

-- fakes.lua: the fakes of `crescent test` (`fake.http`, `fake.location`, `fake.service`), loaded
-- in each spec file's host before testing.lua. The chunk takes the host's testing primitives (T) and
-- what assertions.lua returned; it defines the global `fake` and returns what the runner needs:
-- { http, call, noticed }, the host's two calls into the fakes and the failures they noticed.

local T, assertions = ...
local show, callWith = assertions.show, assertions.callWith
local type, pairs, ipairs, tostring, error, pcall = type, pairs, ipairs, tostring, error, pcall
local sformat, concat = string.format, table.concat
local pack, unpack = table.pack, table.unpack

local runner = {}
-- Failures noticed outside the test's own code (an unmatched fake.http route, the real network
-- or device reached); they fail the running test even when the code under test handled them.
local noticed = {}


-- "unknown option 'fixs' (options: fixes, interval, track; did you mean 'fixes'?)" for each key
-- of `given` (a table a spec wrote) that is not in `known` (a sorted list), raised at the spec's
-- line: a misspelled `status` must not turn a fake's 404 into a 200.
local function checkKeys(given, known, what, level)
  local allowed = {}
  for _, key in ipairs(known) do allowed[key] = true end
  for key in pairs(given) do
    if not allowed[key] then
      local closest = type(key) == "string" and T.closest(key, known)
      error(what .. ": unknown " .. (type(key) == "string" and "key '" .. key .. "'" or "key " .. show(key)) .. " (keys: " .. concat(known, ", ")
        .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", level + 1)
    end
  end
end

-- Raises the error of a testing primitive at the spec's line rather than this file's.
local function atCaller(ok, ...)
  if ok then return ... end
  local message = ...
  if type(message) == "string" then message = message:gsub("^%[crescent fakes%]:%d+: ", "") end
  error(message, 3)
end

fake = {}
local routes = {}
local routeOrder = {}

-- `fake:process { ... }` gives the `fake` module as the answers: named, with how to call it.
local function dotted(first, name, example)
  if rawequal(first, fake) then error(callWith("fake." .. name, ".", example, nil, first), 3) end
end

local function routelist()
  if #routeOrder == 0 then return "no fake.http routes are set" end
  return "routes: " .. concat(routeOrder, ", ")
end

local HTTP_METHODS = { "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT" }
local HTTP_ANSWER = { "body", "error", "headers", "status" }
local isHTTPMethod = {}
for _, method in ipairs(HTTP_METHODS) do isHTTPMethod[method] = true end

-- Refuses an answer no server can give (harden4 H11), so a spec meaning to test a strange status
-- never tests a 200 instead: the status an integer 100-999, the body a string or a table (sent as
-- JSON), header names tokens and values without CR, LF or NUL. Returns nil or the message.
local function answerProblem(answer, what)
  local status, body, headers = answer.status, answer.body, answer.headers
  if status ~= nil and (math.type(status) ~= "integer" or status < 100 or status > 999) then
    local given = type(status) == "number" and tostring(status) or type(status) == "string" and sformat("%q", status) or type(status)
    return what .. ": status must be an integer 100-999 (an HTTP status such as 200 or 404), got " .. given
  end
  if body ~= nil and type(body) ~= "string" and type(body) ~= "table" then
    return what .. ": body must be a string or a table (sent as JSON), got " .. type(body) .. (type(body) == "number" and " (write it as a string)" or "")
  end
  if type(body) == "table" then
    -- Sent as json.encode writes it: a body JSON cannot hold (NaN, text that is not UTF-8) is no
    -- answer a server can give, so it is refused here, naming the route.
    local ok, message = pcall(json.encode, body)
    if not ok then
      return what .. ": " .. (tostring(message):gsub("^json%.encode: value", "body", 1))
    end
  end
  if headers ~= nil then
    if type(headers) ~= "table" then return what .. ": headers must be a table { [name] = value }, got " .. type(headers) end
    for name, value in pairs(headers) do
      if type(name) ~= "string" or not name:match("^[!#$%%&'*+%-.^_`|~%w]+$") then
        return what .. ": header name " .. show(name) .. " is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~; no spaces, colons, CR or LF)"
      end
      if type(value) ~= "string" and type(value) ~= "number" then
        return what .. ": header " .. name .. " must be a string, got " .. type(value)
      end
      if type(value) == "string" and value:find("[\r\n%z]") then
        return what .. ": header " .. name .. "'s value " .. show(value) .. " holds a CR, LF or NUL, which no server can send"
      end
    end
  end
  return nil
end

function fake.http(table_)
  dotted(table_, "http", "fake.http { [\"GET url\"] = { ... } }")
  if type(table_) ~= "table" then error("bad argument #1 to 'fake.http' (a table of routes expected, got " .. type(table_) .. ")", 2) end
  for key, answer in pairs(table_) do
    if type(key) ~= "string" or not key:match("^%u+ %S+$") then
      error("fake.http: a route is 'METHOD url' (\"GET https://example.org/feed\"), got " .. show(key), 2)
    end
    local method = key:match("^%u+")
    if not isHTTPMethod[method] then
      local closest = T.closest(method, HTTP_METHODS)
      error("fake.http: route " .. key .. ": '" .. method .. "' is not an HTTP method (methods: " .. concat(HTTP_METHODS, ", ")
        .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
    end
    if type(answer) ~= "table" and type(answer) ~= "function" and type(answer) ~= "string" then
      error("fake.http: route " .. key .. " must answer a table { status, headers, body }, a string body or a function(request), got " .. type(answer), 2)
    end
    if type(answer) == "table" then
      checkKeys(answer, HTTP_ANSWER, "fake.http: route " .. key, 2)
      local problem = answerProblem(answer, "fake.http: route " .. key)
      if problem then error(problem, 2) end
    end
    if routes[key] == nil then routeOrder[#routeOrder + 1] = key end
    routes[key] = answer
  end
  table.sort(routeOrder)
end

-- A failure noticed outside the test's own code, at `place` (`spec/x_spec.lua:3: `, the script's
-- line that made the request or ran the program, when the host knows it).
local function notice(place, message)
  noticed[#noticed + 1] = (place or "") .. message
end

-- A route function's request: a misspelled field (`req.bdy`) is named with the fields, where it
-- would read nil (as a GET's absent body does, which stays nil).
local REQUEST_NAMES = { "body", "headers", "method", "url" }
local REQUEST_FIELDS = { __index = function(_, key)
  if key == "body" or type(key) ~= "string" then return nil end
  local closest = T.closest(key, REQUEST_NAMES)
  error("fake.http: the request has no field '" .. key .. "' (fields: " .. table.concat(REQUEST_NAMES, ", ")
    .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
end }

-- Called by the host for every http request of the code under test: the response, or nil and an
-- error { code, message }. `place` is where the code under test made the request.
function runner.http(request, place)
  local key = request.method .. " " .. request.url
  local answer = routes[key]
  if answer == nil then
    local message
    if #routeOrder == 0 then
      message = sformat("the code under test reached the network (%s); give it a fake: fake.http { [%q] = { status = 200, body = \"...\" } }", key, key)
    else
      message = sformat("no fake.http route for %s (%s)", key, routelist())
    end
    notice(place, message)
    return nil, { code = "network", message = message }
  end
  if type(answer) == "function" then
    local ok, result = pcall(answer, setmetatable(request, REQUEST_FIELDS))
    if not ok then
      notice(place, "fake.http route " .. key .. " raised: " .. tostring(result))
      return nil, { code = "internal", message = tostring(result) }
    end
    answer = result
  end
  if type(answer) == "string" then answer = { body = answer } end
  if type(answer) ~= "table" then return nil, { code = "internal", message = "fake.http route " .. key .. " answered " .. type(answer) } end
  local ok, message = pcall(checkKeys, answer, HTTP_ANSWER, "fake.http: route " .. key .. "'s function answered a table with", 1)
  if ok then
    message = answerProblem(answer, "fake.http: route " .. key .. "'s function answered a table whose")
    ok = message == nil
  end
  if not ok then
    notice(place, tostring(message))
    return nil, { code = "internal", message = tostring(message) }
  end
  if answer.error then
    local e = answer.error
    return nil, type(e) == "table" and e or { code = tostring(e), message = "fake.http: " .. key .. " failed with " .. tostring(e) }
  end
  local body, headers = answer.body or "", answer.headers or {}
  if type(body) == "table" then
    body = json.encode(body)
    if headers["content-type"] == nil and headers["Content-Type"] == nil then
      local copy = { ["content-type"] = "application/json" }
      for k, v in pairs(headers) do copy[k] = v end
      headers = copy
    end
  end
  return { status = answer.status or 200, headers = headers, body = tostring(body), url = request.url }
end

-- fake.process { ["git pull"] = { status = 0, stdout = "Already up to date.\n" }, git = function(request) ... end }:
-- answers the programs the code under test runs, by their whole command line first, then by the
-- program's name alone, then "*". The handle it returns lists the requests it answered (`calls`).
local programs, programOrder, programCalls = {}, {}, {}

local function programlist()
  if #programOrder == 0 then return "no fake.process answers are set" end
  return "answers: " .. concat(programOrder, ", ")
end

local PROCESS_ANSWER = { "duration", "error", "signal", "status", "stderr", "stdout", "timedOut" }
-- The signals a real program's end can name (Linux numbering), as `process` names them.
local SIGNALS = {}
for _, name in ipairs({ "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
  "PIPE", "ALRM", "TERM", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF",
  "WINCH", "IO", "SYS" }) do SIGNALS["SIG" .. name] = true end
for number = 32, 64 do SIGNALS["SIG" .. number] = true end

-- Nil, or what is wrong with an answer's values: a real program's end has an integer status
-- 0-255 or a known signal (never both), and its output is text. A fake that answers what no
-- program can would let a spec pass for a script that fails for real.
local function processAnswerProblem(answer)
  local status, signal = answer.status, answer.signal
  if status ~= nil and (math.type(status) ~= "integer" or status < 0 or status > 255) then
    return "status must be an integer 0-255 (a program's exit status), got " .. show(status)
  end
  if signal ~= nil and (type(signal) ~= "string" or not SIGNALS[signal]) then
    return "signal must be a signal's name such as \"SIGTERM\" or \"SIGKILL\", got " .. show(signal)
  end
  if status ~= nil and signal ~= nil then
    return "a program ends with a status or a signal, not both (got status " .. show(status) .. " and signal " .. show(signal) .. ")"
  end
  for _, stream in ipairs({ "stdout", "stderr" }) do
    if answer[stream] ~= nil and type(answer[stream]) ~= "string" then
      return stream .. " must be a string (what the program wrote), got " .. type(answer[stream])
    end
  end
  local duration = answer.duration
  if duration ~= nil and (type(duration) ~= "number" or duration ~= duration or duration < 0 or duration == math.huge) then
    return "duration must be the seconds the program takes (a number, 0 or more), got " .. show(duration)
  end
  if answer.timedOut ~= nil and type(answer.timedOut) ~= "boolean" then
    return "timedOut must be a boolean, got " .. show(answer.timedOut)
  end
  if answer.error ~= nil and type(answer.error) ~= "string" and type(answer.error) ~= "table" then
    return "error must be an error code (\"not_found\") or a table { code, message }, got " .. type(answer.error)
  end
  return nil
end

-- A field of a fake's handle that it does not have (`.cals`) raises, naming its fields, as a
-- misspelled field of the host's own handles (`task.reslt`) does.
local function noField(what, fields)
  return function(_, key)
    local closest = type(key) == "string" and T.closest(key, fields)
    error("no field " .. (type(key) == "string" and "'" .. key .. "'" or show(key)) .. " on " .. what .. " (fields: " .. concat(fields, ", ")
      .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
  end
end
local ProcessHandle = { __index = noField("the fake.process handle", { "calls" }) }

function fake.process(table_)
  dotted(table_, "process", "fake.process { [\"git pull\"] = { ... } }")
  if type(table_) ~= "table" then error("bad argument #1 to 'fake.process' (a table of answers expected, got " .. type(table_) .. ")", 2) end
  for key, answer in pairs(table_) do
    if type(key) ~= "string" or key == "" then
      error("fake.process: an answer's key is a command line (\"git pull\"), a program (\"git\") or \"*\", got " .. show(key), 2)
    end
    if type(answer) ~= "table" and type(answer) ~= "function" and type(answer) ~= "string" then
      error("fake.process: " .. key .. " must answer a table { status, stdout, stderr }, a string (its stdout) or a function(request), got " .. type(answer), 2)
    end
    if type(answer) == "table" then
      checkKeys(answer, PROCESS_ANSWER, "fake.process: " .. key, 2)
      local problem = processAnswerProblem(answer)
      if problem then error("fake.process: " .. key .. ": " .. problem, 2) end
    end
    if programs[key] == nil then programOrder[#programOrder + 1] = key end
    programs[key] = answer
  end
  table.sort(programOrder)
  return setmetatable({ calls = programCalls }, ProcessHandle)
end

-- The request a function answer gets: read-only, and a misspelled field (`req.comand`) is named
-- with the fields, where it would read nil (as an absent cwd does, which stays nil).
local PROCESS_REQUEST = { "argv", "command", "cwd", "env", "shell", "stdin" }
local isRequestField = {}
for _, name in ipairs(PROCESS_REQUEST) do isRequestField[name] = true end
local function processRequest(request)
  return setmetatable({}, {
    __index = function(_, key)
      if isRequestField[key] then return request[key] end
      local closest = type(key) == "string" and T.closest(key, PROCESS_REQUEST)
      error("fake.process: the request has no field " .. (type(key) == "string" and "'" .. key .. "'" or show(key)) .. " (fields: "
        .. concat(PROCESS_REQUEST, ", ") .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
    end,
    __newindex = function(_, key)
      error("fake.process: the request is read-only (it is what the code under test ran); cannot set " .. show(key), 2)
    end,
    __pairs = function() return next, request, nil end,
    __len = function() return 0 end,
  })
end

-- Called by the host for every program the code under test runs or spawns: { status, signal,
-- stdout, stderr }, or nil and an error { code, message }.
function runner.process(request, place)
  programCalls[#programCalls + 1] = request
  local key = request.command
  local answer = programs[key]
  if answer == nil then answer = programs[request.argv[1]] end
  if answer == nil then answer = programs["*"] end
  if answer == nil then
    local message
    if #programOrder == 0 then
      message = sformat("the code under test ran a program (%s); give it a fake: fake.process { [%q] = { status = 0, stdout = \"...\" } }", key, key)
    else
      local closest = T.closest(key, programOrder)
      message = sformat("no fake.process answer for %s (%s%s)", key, programlist(),
        closest and "; did you mean '" .. closest .. "'?" or "")
    end
    notice(place, message)
    return nil, { code = "not_found", message = message }
  end
  local answered = type(answer) == "function"
  if answered then
    local ok, result = pcall(answer, processRequest(request))
    if not ok then
      notice(place, "fake.process answer for " .. key .. " raised: " .. tostring(result))
      return nil, { code = "internal", message = tostring(result) }
    end
    answer = result
  end
  if type(answer) == "string" then answer = { stdout = answer } end
  -- A function's answer is checked as a table written in fake.process is, and what is wrong
  -- fails the test at the line that ran the program, though the code under test handles errors.
  local problem
  if type(answer) ~= "table" then
    problem = "must answer a table { status, stdout, stderr } or a string (its stdout), got " .. (answer == nil and "nothing" or type(answer))
  else
    local ok, message = pcall(checkKeys, answer, PROCESS_ANSWER, "its table", 1)
    problem = not ok and tostring(message) or processAnswerProblem(answer)
  end
  if problem then
    local message = "fake.process answer for " .. key .. (answered and "'s function" or "") .. ": " .. problem
    notice(place, message)
    return nil, { code = "internal", message = message }
  end
  if answer.error then
    local e = answer.error
    return nil, type(e) == "table" and e or { code = tostring(e), message = "fake.process: " .. key .. " failed with " .. tostring(e) }
  end
  return { status = answer.status, signal = answer.signal, stdout = answer.stdout or "",
           stderr = answer.stderr or "", timedOut = answer.timedOut == true, duration = answer.duration }
end

local Location = {}
-- A misspelled method (`:fial`) is named with the methods there are, not "attempt to call a nil value".
Location.__index = function(_, key)
  local method = rawget(Location, key)
  if method ~= nil or type(key) ~= "string" or key:sub(1, 2) == "__" then return method end
  local closest = T.closest(key, { "fail" })
  error("the fake.location handle has no method '" .. key .. "' (methods: fail"
    .. (closest and "; did you mean '" .. closest .. "'?" or "") .. "), as h:fail(\"timeout\")", 2)
end
function Location:fail(code, message)
  if getmetatable(self) ~= Location then
    error(callWith("h:fail(code[, message])", ":", "h:fail(\"timeout\")", "fake.location handle", self), 2)
  end
  atCaller(pcall(T.locationFail, code or "unavailable", message or ("fake.location failed with " .. tostring(code or "unavailable"))))
end

local LOCATION_OPTIONS = { "fixes", "interval", "track" }

function fake.location(spec)
  dotted(spec, "location", "fake.location { fixes = { ... } }")
  spec = spec or {}
  if type(spec) ~= "table" then error("bad argument #1 to 'fake.location' (a table { fixes = {...} } or { track = \"x.gpx\" } expected, got " .. type(spec) .. ")", 2) end
  if spec.lat ~= nil or spec.lon ~= nil then
    error("fake.location: got a fix where the options go; give the fixes as a list: fake.location { fixes = { { lat = " .. tostring(spec.lat) .. ", lon = " .. tostring(spec.lon) .. " } } }", 2)
  end
  checkKeys(spec, LOCATION_OPTIONS, "fake.location", 2)
  atCaller(pcall(T.fakeLocation, spec.fixes, spec.track, spec.interval))
  return setmetatable({}, Location)
end

local services_faked = {}
local Fake = {}
Fake.__index = Fake
-- The name is the first argument of the `:` call the spec wrote; named so here, where the
-- host's check would count the handle too ("bad argument #2").
local function checkName(handle, name, signature, what, example)
  if type(name) ~= "string" then
    error(signature .. ": argument #1 must be " .. what .. " of " .. handle.name .. ", got " .. type(name) .. " (as " .. example .. ")", 3)
  end
end
function Fake:set(key, value)
  if getmetatable(self) ~= Fake then error(callWith("fake:set(property, value)", ":", "h:set(\"name\", value)", "fake.service handle", self), 2) end
  checkName(self, key, "fake:set(property, value)", "a property name", "h:set(\"name\", value)")
  atCaller(pcall(T.fakeSet, self.name, key, value))
end
function Fake:emit(event, payload)
  if getmetatable(self) ~= Fake then error(callWith("fake:emit(event[, payload])", ":", "h:emit(\"name\", { ... })", "fake.service handle", self), 2) end
  checkName(self, event, "fake:emit(event[, payload])", "an event name", "h:emit(\"name\", { ... })")
  atCaller(pcall(T.fakeEmit, self.name, event, payload))
end
-- A field of the handle it does not have (`h.cals`) raises, naming its fields and methods, as the
-- other fakes' handles do. Metamethod names (`__name`, which inspect reads from Fake) stay nil.
setmetatable(Fake, { __index = function(_, key)
  if type(key) == "string" and key:sub(1, 2) == "__" then return nil end
  local closest = type(key) == "string" and T.closest(key, { "calls", "emit", "name", "set" })
  error("no field " .. (type(key) == "string" and "'" .. key .. "'" or show(key)) .. " on the fake.service handle (fields: calls, name; "
    .. "methods: emit, set" .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
end })

local SERVICE_OPTIONS = { "events", "methods", "properties", "summary" }

function fake.service(name, spec)
  dotted(name, "service", "fake.service(name, { ... })")
  if type(name) ~= "string" then error("bad argument #1 to 'fake.service' (a service name expected, got " .. type(name) .. ")", 2) end
  spec = spec or {}
  if type(spec) ~= "table" then error("bad argument #2 to 'fake.service' (a table { properties, methods, events } expected, got " .. type(spec) .. ")", 2) end
  checkKeys(spec, SERVICE_OPTIONS, "fake.service", 2)
  local methods, names = spec.methods or {}, {}
  for method in pairs(methods) do names[#names + 1] = method end
  table.sort(names)
  local handle = setmetatable({ name = name, methods = methods, calls = {} }, Fake)
  services_faked[name] = handle
  atCaller(pcall(T.fakeService, name, spec.properties or {}, names, spec.events or {}, spec.summary))
  return handle
end

-- Called by the host for a call of a faked service's method: true and the result, or false and
-- an error { code, message }. `place` is where the code under test called it.
function runner.call(place, name, method, ...)
  local handle = services_faked[name]
  local args = pack(...)
  handle.calls[#handle.calls + 1] = { method = method, args = args }
  local impl = handle.methods[method]
  if impl == nil then
    return false, { code = "unavailable", message = sformat("%sfake.service(%q) has no method '%s'; add methods = { %s = function(...) return ... end }",
      place or "", name, method, method) }
  end
  if type(impl) ~= "function" then return true, impl end
  local ok, result, err = pcall(impl, unpack(args, 1, args.n))
  if not ok then
    if type(result) == "table" and result.code then return false, result end
    return false, { code = "internal", message = tostring(result) }
  end
  if result == nil and err ~= nil then
    return false, type(err) == "table" and err or { code = tostring(err), message = tostring(err) }
  end
  return true, result
end

-- A service the code under test reads that no plugin provides and no fake stands in for: the
-- error says how to fake it. (Wrapped where `services` looks up a service not made yet.)
do
  local proxy = debug.getmetatable(services)
  local byName = proxy and proxy.__index
  local lookup = type(byName) == "table" and debug.getmetatable(byName)
  local index = lookup and lookup.__index
  if type(index) == "function" then
    lookup.__index = function(t, name)
      local ok, result = pcall(index, t, name)
      if ok then return result end
      if type(result) == "string" and result:find("no service", 1, true) and not services_faked[name] then
        error((result:gsub("^[^\n]-:%d+: ", "")) .. sformat("; in a test, fake it: fake.service(%q, { methods = { ... } })", name), 2)
      end
      error(result, 0)
    end
  end
end

-- `fake.locaton {}` names the fakes there are, not Lua's "attempt to call a nil value".
local FAKES = { "http", "location", "process", "service" }
setmetatable(fake, { __index = function(_, key)
  local closest = type(key) == "string" and T.closest(key, FAKES)
  error("no fake '" .. tostring(key) .. "' (fakes: " .. concat(FAKES, ", ") .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
end })

-- A spec file's next test starts with no fakes: its host gives it fresh services.
function runner.reset()
  for _, t in ipairs { routes, routeOrder, programs, programOrder, programCalls, services_faked, noticed } do
    for k in pairs(t) do t[k] = nil end
  end
end

return { http = runner.http, process = runner.process, call = runner.call, noticed = noticed, reset = runner.reset }

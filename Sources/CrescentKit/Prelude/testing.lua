-- testing.lua: the API of `crescent test` (busted's names, DESIGN.md "Testing scripts"), loaded in
-- every test's fresh host after the other prelude modules. The chunk takes the host's testing
-- primitives (T, a private table) and options ({ update, listing, only }), defines the globals and returns
-- the runner the Swift side drives: list(filter) after the spec file ran, then run(i).
--
-- A spec file runs once per test, each time in a new host: describe blocks and hooks are collected
-- again, and only test i runs. So a test sees nothing of another (globals, subscriptions, the
-- store); `setup`/`teardown` run in each test's host, around its `before_each`/`after_each`.

local T, options = ...
local type, pairs, ipairs, tostring, select, error = type, pairs, ipairs, tostring, select, error
local getinfo, sformat, concat = debug.getinfo, string.format, table.concat
local pack, unpack = table.pack, table.unpack
local builtin_assert = assert

local runner = {}
local root = { name = nil, setup = {}, teardown = {}, before_each = {}, after_each = {} }
local current = root
local tests = {}
-- Failures noticed outside the test's own code (an unmatched fake.http route, the real network
-- or device reached); they fail the running test even when the code under test handled them.
local noticed = {}

---------------------------------------------------------------------------------------------------
-- Where: the first caller outside this file

local function where(level)
  level = (level or 2) + 1
  while true do
    local info = getinfo(level, "Sl")
    if not info then return "?" end
    if info.what ~= "C" and not info.source:find("^=%[crescent") then
      return info.short_src .. ":" .. (info.currentline or 0)
    end
    level = level + 1
  end
end

---------------------------------------------------------------------------------------------------
-- Blocks and tests

local function fullname(block, name)
  local parts = { name }
  while block and block.name do
    table.insert(parts, 1, block.name)
    block = block.parent
  end
  return concat(parts, " ")
end

local function checkname(name, fn, what)
  if type(name) ~= "string" then
    error(sformat("bad argument #1 to '%s' (a name string expected, got %s)", what, type(name)), 3)
  end
  if fn ~= nil and type(fn) ~= "function" then
    error(sformat("bad argument #2 to '%s' (function expected, got %s)", what, type(fn)), 3)
  end
end

function describe(name, fn)
  checkname(name, fn, "describe")
  local block = { name = name, parent = current, setup = {}, teardown = {}, before_each = {}, after_each = {} }
  current = block
  local ok, err = pcall(fn)
  current = block.parent
  if not ok then error(err, 0) end
end
context = describe

-- Tests are numbered in the order the file declares them. A host that runs one test (options.only)
-- keeps only that one: a file of a thousand tests runs a thousand times.
local declared = 0

function it(name, fn)
  declared = declared + 1
  if options.only and declared ~= options.only then return end
  checkname(name, fn, "it")
  -- Only the host that lists the tests needs where each is.
  tests[declared] = { name = options.listing and fullname(current, name) or name, block = current, fn = fn,
    where = options.listing and where(2) or "?", pending = fn == nil }
end
test = it

function pending(name)
  declared = declared + 1
  if options.only and declared ~= options.only then return end
  checkname(name, nil, "pending")
  tests[declared] = { name = fullname(current, name), block = current, where = where(2), pending = true }
end

local function hook(kind)
  return function(fn)
    if type(fn) ~= "function" then error(sformat("bad argument #1 to '%s' (function expected, got %s)", kind, type(fn)), 2) end
    local list = current[kind]
    list[#list + 1] = fn
  end
end
setup, teardown = hook("setup"), hook("teardown")
before_each, after_each = hook("before_each"), hook("after_each")
lazy_setup, lazy_teardown, strict_setup, strict_teardown = setup, teardown, setup, teardown

---------------------------------------------------------------------------------------------------
-- Assertions: a failure is a table the runner recognises, carrying the spec's file:line

local Failure = {}
Failure.__index = Failure
Failure.__tostring = function(f) return f.where .. ": " .. f.message end

-- The failure names the first frame outside this file: the spec's line that asserted.
local function fail(message)
  error(setmetatable({ message = message, where = where(2) }, Failure), 0)
end

local function show(v)
  if type(v) == "string" then return (sformat("%q", v):gsub("\\\n", "\\n")) end
  return inspect(v, { depth = 2, width = 60, newline = " ", indent = "" })
end

-- Path-by-path differences of two values: { { path, expected, actual }... }.
local MISSING = setmetatable({}, { __tostring = function() return "(missing)" end })
local function differences(expected, actual, path, out, seen)
  if expected == actual then return out end
  if type(expected) ~= "table" or type(actual) ~= "table" or getmetatable(expected) or getmetatable(actual) then
    out[#out + 1] = { path, expected, actual }
    return out
  end
  seen[expected] = seen[expected] or {}
  if seen[expected][actual] then return out end
  seen[expected][actual] = true
  local keys, order = {}, {}
  for k in pairs(expected) do if not keys[k] then keys[k] = true; order[#order + 1] = k end end
  for k in pairs(actual) do if not keys[k] then keys[k] = true; order[#order + 1] = k end end
  table.sort(order, function(a, b)
    if type(a) == type(b) and (type(a) == "number" or type(a) == "string") then return a < b end
    return type(a) < type(b)
  end)
  for _, k in ipairs(order) do
    local step = type(k) == "string" and k:match("^[%a_][%w_]*$") and ("." .. k) or ("[" .. show(k) .. "]")
    local e, a = expected[k], actual[k]
    if e == nil then e = MISSING end
    if a == nil then a = MISSING end
    differences(e, a, path .. step, out, seen)
  end
  return out
end

local function render(v) return v == MISSING and "(missing)" or show(v) end

local function difftable(expected, actual)
  local rows = differences(expected, actual, "", {}, {})
  local width = 4
  for _, row in ipairs(rows) do if #row[1] > width then width = #row[1] end end
  local lines = { sformat("  %-" .. width .. "s  %s", "path", "expected  |  actual") }
  for i, row in ipairs(rows) do
    if i > 20 then lines[#lines + 1] = sformat("  ... (%d more differences)", #rows - 20); break end
    lines[#lines + 1] = sformat("  %-" .. width .. "s  %s  |  %s", row[1] == "" and "(value)" or row[1],
      render(row[2]), render(row[3]))
  end
  return concat(lines, "\n")
end

local function mismatch(what, expected, actual)
  if type(expected) == "table" and type(actual) == "table" then
    return sformat("%s: the tables differ\n%s", what, difftable(expected, actual))
  end
  return sformat("%s\n  expected: %s\n  actual:   %s", what, show(expected), show(actual))
end

local function deepsame(a, b) return #differences(a, b, "", {}, {}) == 0 end

local A = {}
function A.equals(expected, actual, message)
  if expected ~= actual then fail(mismatch(message or "expected the values to be equal", expected, actual)) end
end
function A.same(expected, actual, message)
  if not deepsame(expected, actual) then fail(mismatch(message or "expected the values to be the same", expected, actual)) end
end
function A.not_equals(expected, actual, message)
  if expected == actual then fail((message or "expected the values to differ") .. "\n  both: " .. show(actual)) end
end
function A.not_same(expected, actual, message)
  if deepsame(expected, actual) then fail((message or "expected the values not to be the same") .. "\n  both: " .. show(actual)) end
end
function A.truthy(v, message) if not v then fail((message or "expected a truthy value") .. ", got " .. show(v)) end end
function A.falsy(v, message) if v then fail((message or "expected a falsy value") .. ", got " .. show(v)) end end
function A.is_nil(v, message) if v ~= nil then fail((message or "expected nil") .. ", got " .. show(v)) end end
function A.is_not_nil(v, message) if v == nil then fail(message or "expected a value, got nil") end end
function A.is_true(v, message) if v ~= true then fail((message or "expected true") .. ", got " .. show(v)) end end
function A.is_false(v, message) if v ~= false then fail((message or "expected false") .. ", got " .. show(v)) end end
function A.matches(pattern, actual, message)
  if type(actual) ~= "string" or not actual:find(pattern) then
    fail(sformat("%s\n  pattern: %s\n  actual:  %s", message or "expected the string to match", show(pattern), show(actual)))
  end
end
function A.error(fn, expected, message)
  if type(fn) ~= "function" then fail("assert.error needs a function to call, got " .. type(fn)) end
  local ok, err = pcall(fn)
  if ok then fail(message or "expected an error, but the function returned") end
  if expected == nil then return end
  local got = type(err) == "table" and getmetatable(err) == nil and err.message or err
  if type(expected) == "string" and type(got) == "string" then
    -- busted compares the message without its position; so do we, and accept a part of it.
    local bare = got:gsub("^[^:\n]+:%d+: ", "")
    if got ~= expected and bare ~= expected and not got:find(expected, 1, true) then
      fail(mismatch(message or "the error differs", expected, got))
    end
  elseif not deepsame(expected, err) then
    fail(mismatch(message or "the error differs", expected, err))
  end
end
function A.no_error(fn, message)
  local ok, err = pcall(fn)
  if not ok then fail((message or "expected no error") .. ", got " .. tostring(err)) end
end

local aliases = {
  equal = "equals", are_equal = "equals", are_equals = "equals", is_equal = "equals",
  are_same = "same", is_same = "same", is_truthy = "truthy", is_falsy = "falsy",
  has_error = "error", errors = "error", has_no_error = "no_error", has_no_errors = "no_error",
  are_not_equal = "not_equals", are_not_same = "not_same", is_not_equal = "not_equals", not_equal = "not_equals",
  match = "matches", is_match = "matches", ["nil"] = "is_nil", not_nil = "is_not_nil",
}
for alias, name in pairs(aliases) do A[alias] = A[name] end
-- assert.are.same, assert.is.truthy, assert.is_not.equal …: the words in between change nothing
-- but `not`, which flips equals/same.
local negated = { equals = A.not_equals, equal = A.not_equals, same = A.not_same, ["nil"] = A.is_not_nil,
  truthy = A.falsy, falsy = A.truthy, error = A.no_error, has_error = A.no_error }
A.are, A.is, A.has = A, A, A
A.are_not = setmetatable({}, { __index = negated })
A.is_not, A["not"], A.has_no = A.are_not, A.are_not, A.are_not

---------------------------------------------------------------------------------------------------
-- Spies

local Spy = {}
Spy.__index = Spy
Spy.__call = function(self, ...)
  local args = pack(...)
  self.calls[#self.calls + 1] = args
  if self.fn then return self.fn(...) end
end
Spy.__name = "spy"

spy = {}
function spy.new(fn)
  if fn ~= nil and type(fn) ~= "function" then error("bad argument #1 to 'spy.new' (function expected, got " .. type(fn) .. ")", 2) end
  return setmetatable({ fn = fn, calls = {} }, Spy)
end
function spy.on(t, name)
  if type(t) ~= "table" then error("bad argument #1 to 'spy.on' (table expected, got " .. type(t) .. ")", 2) end
  local s = spy.new(t[name])
  s.target, s.name = t, name
  t[name] = s
  return s
end
function Spy:revert() if self.target then self.target[self.name] = self.fn end end
function Spy:clear() self.calls = {} end

local function argsmatch(call, expected)
  if call.n ~= expected.n then return false end
  for i = 1, expected.n do if not deepsame(expected[i], call[i]) then return false end end
  return true
end

local function showargs(args)
  local parts = {}
  for i = 1, args.n do parts[i] = show(args[i]) end
  return "(" .. concat(parts, ", ") .. ")"
end

function A.spy(s)
  if getmetatable(s) ~= Spy then fail("assert.spy needs a spy (spy.new or spy.on), got " .. show(s)) end
  local function calls()
    local lines = {}
    for i, call in ipairs(s.calls) do lines[i] = "    " .. showargs(call) end
    return #lines == 0 and "  it was never called" or ("  its calls:\n" .. concat(lines, "\n"))
  end
  local was = {
    called = function(n)
      if n == nil then
        if #s.calls == 0 then fail("expected the spy to be called") end
      elseif #s.calls ~= n then
        fail(sformat("expected the spy to be called %d time%s, it was called %d time%s\n%s", n, n == 1 and "" or "s",
          #s.calls, #s.calls == 1 and "" or "s", calls()), 3)
      end
    end,
    called_with = function(...)
      local expected = pack(...)
      for _, call in ipairs(s.calls) do if argsmatch(call, expected) then return end end
      fail("expected the spy to be called with " .. showargs(expected) .. "\n" .. calls())
    end,
  }
  local was_not = {
    called = function()
      if #s.calls > 0 then fail("expected the spy not to be called\n" .. calls()) end
    end,
    called_with = function(...)
      local expected = pack(...)
      for _, call in ipairs(s.calls) do
        if argsmatch(call, expected) then fail("expected the spy not to be called with " .. showargs(expected)) end
      end
    end,
  }
  return { was = was, was_not = was_not, ["not"] = was_not, has_been = was }
end
A.stub = A.spy

---------------------------------------------------------------------------------------------------
-- Views: the top controller's view, as --ui plain and --ui json show it

function view_text() return T.viewText() end
function view_json()
  local text = T.viewJSON()
  if text == nil then return nil end
  return json.decode(text)
end

local function readfile(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

local function linediff(expected, actual)
  local e, a = {}, {}
  for line in (expected .. "\n"):gmatch("(.-)\n") do e[#e + 1] = line end
  for line in (actual .. "\n"):gmatch("(.-)\n") do a[#a + 1] = line end
  local lines = {}
  for i = 1, math.max(#e, #a) do
    if e[i] ~= a[i] then
      if e[i] then lines[#lines + 1] = sformat("  -%3d| %s", i, e[i]) end
      if a[i] then lines[#lines + 1] = sformat("  +%3d| %s", i, a[i]) end
    end
  end
  return concat(lines, "\n")
end

function A.view(golden, message)
  if type(golden) ~= "string" then fail("assert.view needs the path of a golden file, got " .. show(golden)) end
  local actual = T.viewText()
  if actual == nil then fail("assert.view: no controller is shown (push one, or run a script that does)") end
  actual = actual .. "\n"
  local expected = readfile(golden)
  if options.update then
    if expected ~= actual then
      local f, err = io.open(golden, "wb")
      if not f then fail("assert.view: cannot write " .. golden .. ": " .. tostring(err)) end
      f:write(actual)
      f:close()
      T.noteUpdated(golden)
    end
    return
  end
  if expected == nil then
    fail(sformat("assert.view: the golden file %s does not exist; run `crescent test --update` to write it from this view:\n%s",
      golden, actual))
  end
  if expected ~= actual then
    fail(sformat("%s: the view differs from %s (- expected, + actual; `crescent test --update` rewrites it)\n%s",
      message or "assert.view", golden, linediff(expected, actual)))
  end
end

assert = setmetatable(A, {
  __call = function(_, v, ...)
    if not v then
      local message = select("#", ...) > 0 and (...) or "assertion failed!"
      fail(type(message) == "string" and message or show(message))
    end
    return v, ...
  end,
})

---------------------------------------------------------------------------------------------------
-- Time

clock = {
  advance = function(seconds)
    if type(seconds) ~= "number" or seconds ~= seconds or seconds < 0 then
      error("bad argument #1 to 'clock.advance' (seconds >= 0 expected, got " .. show(seconds) .. ")", 2)
    end
    T.advance(seconds)
  end,
  run = function(limit) return T.run(limit) end,
  now = function() return T.now() end,
}

---------------------------------------------------------------------------------------------------
-- Fakes

fake = {}
local routes = {}
local routeOrder = {}

local function routelist()
  if #routeOrder == 0 then return "no fake.http routes are set" end
  return "routes: " .. concat(routeOrder, ", ")
end

function fake.http(table_)
  if type(table_) ~= "table" then error("bad argument #1 to 'fake.http' (a table of routes expected, got " .. type(table_) .. ")", 2) end
  for key, answer in pairs(table_) do
    if type(key) ~= "string" or not key:match("^%u+ %S+$") then
      error("fake.http: a route is 'METHOD url' (\"GET https://example.org/feed\"), got " .. show(key), 2)
    end
    if type(answer) ~= "table" and type(answer) ~= "function" and type(answer) ~= "string" then
      error("fake.http: route " .. key .. " must answer a table { status, headers, body }, a string body or a function(request), got " .. type(answer), 2)
    end
    if routes[key] == nil then routeOrder[#routeOrder + 1] = key end
    routes[key] = answer
  end
  table.sort(routeOrder)
end

-- Called by the host for every http request of the code under test: the response, or nil and an
-- error { code, message }.
function runner.http(request)
  local key = request.method .. " " .. request.url
  local answer = routes[key]
  if answer == nil then
    local message
    if #routeOrder == 0 then
      message = sformat("the code under test reached the network (%s); give it a fake: fake.http { [%q] = { status = 200, body = \"...\" } }", key, key)
    else
      message = sformat("no fake.http route for %s (%s)", key, routelist())
    end
    noticed[#noticed + 1] = message
    return nil, { code = "network", message = message }
  end
  if type(answer) == "function" then
    local ok, result = pcall(answer, request)
    if not ok then
      noticed[#noticed + 1] = "fake.http route " .. key .. " raised: " .. tostring(result)
      return nil, { code = "internal", message = tostring(result) }
    end
    answer = result
  end
  if type(answer) == "string" then answer = { body = answer } end
  if type(answer) ~= "table" then return nil, { code = "internal", message = "fake.http route " .. key .. " answered " .. type(answer) } end
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

local Location = {}
Location.__index = Location
function Location:fail(code, message)
  T.locationFail(code or "unavailable", message or ("fake.location failed with " .. tostring(code or "unavailable")))
end

function fake.location(spec)
  spec = spec or {}
  if type(spec) ~= "table" then error("bad argument #1 to 'fake.location' (a table { fixes = {...} } or { track = \"x.gpx\" } expected, got " .. type(spec) .. ")", 2) end
  T.fakeLocation(spec.fixes, spec.track, spec.interval)
  return setmetatable({}, Location)
end

local services_faked = {}
local Fake = {}
Fake.__index = Fake
function Fake:set(key, value) T.fakeSet(self.name, key, value) end
function Fake:emit(event, payload) T.fakeEmit(self.name, event, payload) end

function fake.service(name, spec)
  if type(name) ~= "string" then error("bad argument #1 to 'fake.service' (a service name expected, got " .. type(name) .. ")", 2) end
  spec = spec or {}
  local methods, names = spec.methods or {}, {}
  for method in pairs(methods) do names[#names + 1] = method end
  table.sort(names)
  local handle = setmetatable({ name = name, methods = methods, calls = {} }, Fake)
  services_faked[name] = handle
  T.fakeService(name, spec.properties or {}, names, spec.events or {}, spec.summary)
  return handle
end

-- Called by the host for a call of a faked service's method: true and the result, or false and
-- an error { code, message }.
function runner.call(name, method, ...)
  local handle = services_faked[name]
  local args = pack(...)
  handle.calls[#handle.calls + 1] = { method = method, args = args }
  local impl = handle.methods[method]
  if impl == nil then
    return false, { code = "unavailable", message = sformat("fake.service(%q) has no method '%s'; add methods = { %s = function(...) return ... end }", name, method, method) }
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

---------------------------------------------------------------------------------------------------
-- Scripts and controllers

function script(path, ...)
  if type(path) ~= "string" then error("bad argument #1 to 'script' (a path expected, got " .. type(path) .. ")", 2) end
  local chunk, err = loadfile(path)
  if not chunk then error("script: " .. err, 2) end
  T.scriptFolder(path)
  local args = pack(...)
  local argt = { [-1] = "crescent", [0] = path }
  for i = 1, args.n do argt[i] = args[i] end
  arg = argt
  for i = #app.args, 1, -1 do app.args[i] = nil end
  for i = 1, args.n do app.args[i] = args[i] end
  return chunk(...)
end

function send(command, ...) return app.send(command, ...) end

---------------------------------------------------------------------------------------------------
-- The runner

-- The tests, as { name, where, pending, selected } in order; `filter` is a Lua pattern on names.
function runner.list(filter)
  local list = {}
  for i, t in ipairs(tests) do
    list[i] = { name = t.name, where = t.where, pending = t.pending,
      selected = filter == nil or t.name:find(filter) ~= nil }
  end
  return list
end

local function chain(block)
  local blocks = {}
  while block do table.insert(blocks, 1, block); block = block.parent end
  return blocks
end

local function handler(err)
  if getmetatable(err) == Failure then return err end
  local message = type(err) == "string" and err or (type(err) == "table" and err.message and tostring(err.message)) or inspect(err)
  -- The runner's own frames say nothing about the spec: keep the spec's and the code's.
  local lines = {}
  for line in (debug.traceback(message, 2) .. "\n"):gmatch("(.-)\n") do
    if not line:find("[crescent testing]", 1, true) and not line:find("in function 'xpcall'", 1, true) then
      lines[#lines + 1] = line
    end
  end
  return { message = concat(lines, "\n"), error = true }
end

-- Runs test i (hooks, body, hooks) as a task, driving virtual time while it waits; returns
-- "passed" or "failed" and the message.
function runner.run(i)
  local t = tests[i]
  local blocks = chain(t.block)
  local outcome
  local task_ = task(function()
    local ok, err = xpcall(function()
      for _, block in ipairs(blocks) do for _, fn in ipairs(block.setup) do fn() end end
      for _, block in ipairs(blocks) do for _, fn in ipairs(block.before_each) do fn() end end
      t.fn()
    end, handler)
    for b = #blocks, 1, -1 do
      for _, fn in ipairs(blocks[b].after_each) do
        local ok2, err2 = xpcall(fn, handler)
        if ok and not ok2 then ok, err = ok2, err2 end
      end
    end
    for b = #blocks, 1, -1 do
      for _, fn in ipairs(blocks[b].teardown) do
        local ok2, err2 = xpcall(fn, handler)
        if ok and not ok2 then ok, err = ok2, err2 end
      end
    end
    outcome = { ok = ok, err = err }
  end)
  while true do
    T.settle()
    if task_.done or not T.step() then break end
  end
  if not outcome then
    task_:cancel()
    outcome = { ok = false, err = { message = "the test waited for something that never came: nothing was pending on the clock"
      .. " (advance the clock inside the test, or fake the service it waits for)" } }
  end
  local messages = {}
  if not outcome.ok then
    local err = outcome.err
    messages[1] = getmetatable(err) == Failure and tostring(err) or err.message
  end
  for _, message in ipairs(noticed) do messages[#messages + 1] = message end
  return #messages == 0 and "passed" or "failed", concat(messages, "\n")
end

return runner

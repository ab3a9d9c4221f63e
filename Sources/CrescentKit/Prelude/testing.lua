-- testing.lua: the API of `crescent test` (busted's names, DESIGN.md "Testing scripts"), loaded in
-- every test's fresh host after the other prelude modules. The chunk takes the host's testing
-- primitives (T, a private table), options ({ update, listing, only }) and what assertions.lua
-- returned; it defines the other globals (describe/it, clock, fake, script, send) and returns the
-- runner the Swift side drives: list(filter) after the spec file ran, then run(i).
--
-- A spec file runs once per test, each time in a new host: describe blocks and hooks are collected
-- again, and only test i runs. So a test sees nothing of another (globals, subscriptions, the
-- store); `setup`/`teardown` run in each test's host, around its `before_each`/`after_each`.
--
-- So that a file of many tests costs each host little more than its own test, the host that lists
-- the tests also records the file's plan (runner.plan): each describe call's range of tests, and
-- which functions are test bodies and describe bodies written inline. A test's host is given
-- (options.skip) the describe calls it meets that do not hold its test: it does not run their
-- bodies; and its copy of the compiled file has the other inline bodies replaced by empty
-- functions (SpecPlan), so it neither loads nor runs them.

local T, options, assertions = ...
local where, Failure, show = assertions.where, assertions.Failure, assertions.show
local type, pairs, ipairs, tostring, select, error = type, pairs, ipairs, tostring, select, error
local sformat, concat = string.format, table.concat
local pack, unpack = table.pack, table.unpack

local runner = {}
local root = { name = nil, setup = {}, teardown = {}, before_each = {}, after_each = {} }
local current = root
local tests = {}
local getinfo = debug.getinfo
-- Failures noticed outside the test's own code (an unmatched fake.http route, the real network
-- or device reached); they fail the running test even when the code under test handled them.
local noticed = {}

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

-- Tests are numbered in the order the file declares them. A host that runs one test (options.only)
-- keeps only that one: a file of a thousand tests runs a thousand times.
local declared = 0
-- Describe calls, numbered in the order they are made; the plan (listing host) of each: its first
-- and last test, how many describe calls it makes inside, its parent's number, its body's key.
local described, plans = 0, {}

-- "linedefined:lastlinedefined" of function `fn` when it is written inline, on the line of the
-- call of describe or it (`level` is that caller's): nothing else can call such a function.
local function inlineKey(fn, level)
  local info, caller = getinfo(fn, "S"), getinfo(level + 1, "l")
  if info.what ~= "Lua" or not caller or caller.currentline ~= info.linedefined then return nil end
  return info.linedefined .. ":" .. info.lastlinedefined
end

function describe(name, fn)
  checkname(name, fn, "describe")
  described = described + 1
  local number = described
  local skip = options.skip and options.skip[number]
  if skip then                                        -- not on the way to this host's test
    declared, described = skip[1], described + skip[2]
    return
  end
  local block = { name = name, parent = current, number = number, setup = {}, teardown = {}, before_each = {}, after_each = {} }
  local first = declared + 1
  current = block
  local ok, err = pcall(fn)
  current = block.parent
  if options.listing then
    plans[number] = { first = first, last = declared, nested = described - number, parent = block.parent.number or 0,
      key = inlineKey(fn, 2) }
  end
  if not ok then error(err, 0) end
end
context = describe

function it(name, fn)
  declared = declared + 1
  if options.only and declared ~= options.only then return end
  checkname(name, fn, "it")
  -- Only the host that lists the tests needs where each is.
  tests[declared] = { name = options.listing and fullname(current, name) or name, block = current, fn = fn,
    where = options.listing and where(2) or "?", pending = fn == nil, key = options.listing and fn and inlineKey(fn, 2) }
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
-- Time

clock = {
  advance = function(seconds)
    if type(seconds) ~= "number" or seconds ~= seconds or seconds < 0 then
      error("bad argument #1 to 'clock.advance' (seconds >= 0 expected, got " .. show(seconds) .. ")", 2)
    end
    T.advance(seconds)
  end,
  run = T.run,
  now = function() return T.now() end,
}

-- os.exit would end the whole run (and with it the report): under `crescent test` it ends only the
-- running test, which fails.
os.exit = T.exit

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

-- The file's plan, for the hosts of its tests: { describes = { { first, last, nested, parent, key }
-- ... }, tests = { key or false ... } } (see the top of this file).
function runner.plan()
  local describes, keys = {}, {}
  for i = 1, described do
    local p = plans[i] or { first = 1, last = 0, nested = 0, parent = 0 }
    describes[i] = { p.first, p.last, p.nested, p.parent, p.key or false }
  end
  for i = 1, declared do keys[i] = tests[i] and tests[i].key or false end
  return { describes = describes, tests = keys }
end

local function chain(block)
  local blocks = {}
  while block do table.insert(blocks, 1, block); block = block.parent end
  return blocks
end

local function handler(err)
  if getmetatable(err) == Failure then return err end
  local message = type(err) == "string" and err or (type(err) == "table" and err.message and tostring(err.message)) or inspect(err)
  -- The runner's own frames say nothing about the spec: keep the spec's and the code's. The
  -- message is kept whole (debug.traceback would cut it at a NUL byte).
  local lines = { message }
  for line in (debug.traceback("", 2) .. "\n"):gmatch("(.-)\n") do
    if line ~= "" and not line:find("[crescent testing]", 1, true) and not line:find("[crescent assertions]", 1, true)
        and not line:find("in function 'xpcall'", 1, true) then
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
  local stopped
  while true do
    T.settle()
    if task_.done then break end
    local stepped, why = T.step()
    if not stepped then stopped = why; break end
  end
  if not outcome then
    task_:cancel()
    outcome = { ok = false, err = { message = stopped or "the test did not finish" } }
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

-- assertions.lua: the assertions, spies and view checks of `crescent test` (busted's names), loaded
-- in each test's host before testing.lua. The chunk takes the host's testing primitives (T) and the
-- run's options ({ update }), defines the globals `assert`, `spy`, `view_text`, `view_json` and `screen_text`, and
-- returns what the runner needs: { where, Failure, show }.
--
-- A failed assertion raises a Failure: a table carrying the message and the spec's file:line (the
-- first frame outside the prelude), which the runner reports as it is, without a traceback.

local T, options = ...
local type, pairs, ipairs, tostring, select, error = type, pairs, ipairs, tostring, select, error
local getinfo, sformat, concat = debug.getinfo, string.format, table.concat
local pack = table.pack
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
-- Views: the top controller's view, as --ui plain and --ui json show it, and the live screen

function view_text() return T.viewText() end
-- The screen a person would see at width x height (default: the run's columns x 24): the view,
-- the `?` help over it, the status line.
function screen_text(width, height) return T.screenText(width, height) end
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


return { where = where, Failure = Failure, show = show }

-- doubles.lua: luassert's test doubles under busted's names, loaded in each spec file's host after
-- assertions.lua, whose engine it takes: the globals `spy`, `stub`, `mock` and `match`, and the
-- spy assertions (`assert.spy(s).was.called(n)`, `called_with`, `returned_with`, ...). It returns
-- { spy, stub, mock, match } for `require "luassert.spy"` and the others.

local E = ...
local type, pairs, ipairs, tostring, select, error = type, pairs, ipairs, tostring, select, error
local sformat, concat = string.format, table.concat
local pack, unpack = table.pack, table.unpack
local show, callable, deepcompare, register = E.show, E.callable, E.deepcompare, E.register
-- A matcher or stub given wrong arguments fails the spec (busted binds luassert's argument
-- checks to its `fail`); a spy given a non-function is an error, as in luassert.
local fail = E.fail

---------------------------------------------------------------------------------------------------
-- Matchers: match._, match.is_string(), match.is_not_nil(), match.same(t), match.is_ref(t) ...

local Matcher = {}
Matcher.__call = function(self, value) return self.callback(value) == self.mod end
local function is_matcher(v) return type(v) == "table" and getmetatable(v) == Matcher end

local MatchState = {}
MatchState.__index = E.chainindex
MatchState.__call = function(self, ...)
  local keys = E.extract("matcher", rawget(self, "tokens"), "match")
  rawset(self, "tokens", {})
  local matcher
  for _, key in ipairs(keys) do matcher = E.namespaces.matcher[key] or matcher end
  local args = pack(...)
  for _, key in ipairs(keys) do
    local modifier = E.namespaces.modifier[key]
    if modifier then modifier.callback(self, not matcher and args or nil, 2) end
  end
  if not matcher then return self end
  return setmetatable({ name = matcher.name, mod = rawget(self, "mod"), arguments = args,
    callback = matcher.callback(self, args, 2) }, Matcher)
end

match = setmetatable({
  _ = setmetatable({ mod = true, name = "_", callback = function() return true end }, Matcher),
  state = function() return setmetatable({ mod = true, tokens = {} }, MatchState) end,
  is_matcher = is_matcher,
  is_ref_matcher = function(v) return is_matcher(v) and v.name == "ref" end,
}, { __index = function(self, key) return rawget(self, "state")()[key] end })

local function matcher(name, make) register(nil, "matcher", name, make) end
local function needs(args, count, name)
  if args.n < count then fail(sformat("the '%s' matcher requires a minimum of %d arguments, got: %d", name, count, args.n)) end
end
local function valuetest(test) return function() return test end end
matcher("true", valuetest(function(v) return v == true end))
matcher("false", valuetest(function(v) return v == false end))
matcher("truthy", valuetest(function(v) return v ~= nil and v ~= false end))
matcher("falsy", valuetest(function(v) return v == nil or v == false end))
for _, kind in ipairs({ "nil", "boolean", "number", "string", "table", "function", "userdata", "thread" }) do
  matcher(kind, valuetest(function(v) return type(v) == kind end))
end
matcher("equals", function(_, args) needs(args, 1, "equals"); return function(v) return v == args[1] end end)
matcher("same", function(_, args)
  needs(args, 1, "same")
  return function(v)
    if type(v) == "table" and type(args[1]) == "table" then return deepcompare(v, args[1], true) end
    return v == args[1]
  end
end)
matcher("ref", function(_, args)
  needs(args, 1, "ref")
  local kind = type(args[1])
  if kind ~= "table" and kind ~= "function" and kind ~= "thread" and kind ~= "userdata" then
    fail("bad argument #1 to 'ref' (object expected, got " .. kind .. ")")
  end
  return function(v) return v == args[1] end
end)
matcher("matches", function(_, args)
  needs(args, 1, "matches")
  if type(args[1]) ~= "string" then fail("bad argument #1 to 'matches' (a pattern string expected, got " .. type(args[1]) .. ")") end
  if args[2] ~= nil and not tonumber(args[2]) then fail("bad argument #2 to 'matches' (a start position number expected, got " .. type(args[2]) .. ")") end
  return function(v)
    if type(v) == "number" or type(v) == "string" or (type(v) == "table" and (getmetatable(v) or {}).__tostring) then
      return tostring(v):find(args[1], args[2], args[3]) ~= nil
    end
    return false
  end
end)
matcher("near", function(_, args)
  needs(args, 2, "near")
  for i, what in ipairs({ "expected", "tolerance" }) do
    if not tonumber(args[i]) then fail("bad argument #" .. i .. " to 'near' (the " .. what .. " number expected, got " .. show(args[i]) .. ")") end
  end
  return function(v)
    v = tonumber(v)
    local expected, tolerance = tonumber(args[1]), tonumber(args[2])
    return v ~= nil and v >= expected - tolerance and v <= expected + tolerance
  end
end)
matcher("unique", function(_, args)
  return function(list)
    for k, v in pairs(list) do
      for k2, v2 in pairs(list) do
        if k ~= k2 and (v == v2 or (args[1] and deepcompare(v, v2, true))) then return false end
      end
    end
    return true
  end
end)
local function composite(name, combine)
  matcher(name, function(_, args)
    needs(args, 1, name)
    for i = 1, args.n do
      if not is_matcher(args[i]) then fail("bad argument #" .. i .. " to '" .. name .. "' (matcher expected, got " .. type(args[i]) .. ")") end
    end
    return function(v) return combine(args, v) end
  end)
end
composite("all_of", function(args, v) for i = 1, args.n do if not args[i](v) then return false end end return true end)
composite("any_of", function(args, v) for i = 1, args.n do if args[i](v) then return true end end return false end)
composite("none_of", function(args, v) for i = 1, args.n do if args[i](v) then return false end end return true end)
E.namespaces.matcher.match = E.namespaces.matcher.matches
E.namespaces.matcher.equal = E.namespaces.matcher.equals

---------------------------------------------------------------------------------------------------
-- Spies: callable tables recording each call's arguments and results

local Spy = {}
Spy.__name = "spy"
local function is_spy(v) return type(v) == "table" and getmetatable(v) == Spy end

local function deepcopy(v, cache)
  if type(v) ~= "table" or is_spy(v) or is_matcher(v) then return v end
  cache = cache or {}
  if cache[v] then return cache[v] end
  local copy = {}
  cache[v] = copy
  for k, value in next, v do copy[k] = deepcopy(value, cache) end
  return setmetatable(copy, getmetatable(v))
end

-- A call's record is the list of its arguments (copied, with n); `vals` and `refs` as luassert's.
local function record(list)
  local refs = pack(unpack(list, 1, list.n))
  local vals = deepcopy(list)
  return setmetatable(vals, { __index = { vals = vals, refs = refs } })
end

Spy.__call = function(self, ...)
  self.calls[#self.calls + 1] = record(pack(...))
  local results = pack(self.callback(...))
  self.returnvals[#self.returnvals + 1] = record(results)
  return unpack(results, 1, results.n)
end

-- Whether a call's arguments match what is expected (values compared as same, or matchers).
-- As in luassert, the counts must agree too: a call f(1, nil) is not called_with(1).
local function argsmatch(call, expected)
  local refs = call.refs or call
  local count = call.n or #call
  if count ~= (expected.n or #expected) then return false end
  for i = 1, count do
    local spec, value = expected[i], call[i]
    if is_matcher(spec) then
      if not spec(spec.name == "ref" and refs[i] or value) then return false end
    elseif not deepcompare(value, spec) then
      return false
    end
  end
  return true
end

local function lastmatch(list, expected)
  for i = #list, 1, -1 do if argsmatch(list[i], expected) then return list[i] end end
  return nil
end

local methods = {}
function methods.revert(self)
  if not self.reverted then
    if self.target_table and self.target_key ~= nil then self.target_table[self.target_key] = self.callback end
    self.reverted = true
  end
  return self.callback
end
function methods.clear(self) self.calls, self.returnvals = {}, {}; return self end
function methods.called(self, times, compare)
  if times or compare then
    compare = compare or function(count, expected) return count == expected end
    return compare(#self.calls, times), #self.calls
  end
  return #self.calls > 0, #self.calls
end
function methods.called_with(self, args) return lastmatch(self.calls, args) ~= nil end
function methods.returned_with(self, args) return lastmatch(self.returnvals, args) ~= nil end

spy = {}
function spy.new(callback)
  callback = callback or function() end
  if not callable(callback) then
    error("bad argument #1 to 'spy.new' (function or callable object expected, got " .. type(callback) .. ")", 2)
  end
  local s = { calls = {}, returnvals = {}, callback = callback }
  for name, fn in pairs(methods) do s[name] = fn end
  return setmetatable(s, Spy)
end
function spy.on(t, key)
  if type(t) ~= "table" then error("bad argument #1 to 'spy.on' (table expected, got " .. type(t) .. ")", 2) end
  local s = spy.new(t[key])
  t[key] = s
  s.target_table, s.target_key = t, key
  return s
end
spy.is_spy = is_spy
setmetatable(spy, { __call = function(_, ...) return spy.new(...) end })

---------------------------------------------------------------------------------------------------
-- Stubs: spies on a table's key that answer set values instead of calling the original

stub = {}
function stub.new(object, key, ...)
  if object == nil and key == nil then object, key = {}, "" end
  if type(object) ~= "table" or key == nil then
    fail("bad arguments to 'stub.new' (a table and a key expected: stub(t, \"name\"))")
  end
  if object[key] ~= nil and not callable(object[key]) then
    fail("stub.new: t." .. tostring(key) .. " is a " .. type(object[key]) .. "; only functions, callables or nil can be stubbed")
  end
  local original = object[key]
  local values = pack(...)
  local default = (values.n == 1 and callable(values[1])) and values[1] or function() return unpack(values, 1, values.n) end
  local oncalls = {}
  object[key] = function(...)
    local args = pack(...)
    for _, on in ipairs(oncalls) do
      if argsmatch(args, on.args) then return on.answer(...) end
    end
    return default(...)
  end
  local s = spy.on(object, key)
  local spyrevert = s.revert
  s.revert = function(self)
    if not self.reverted then
      spyrevert(self)
      object[key] = original
      self.reverted = true
    end
    return original
  end
  s.returns = function(...)
    local answer = pack(...)
    default = function() return unpack(answer, 1, answer.n) end
    return s
  end
  s.invokes = function(fn) default = fn; return s end
  s.by_default = { returns = s.returns, invokes = s.invokes }
  s.on_call_with = function(...)
    local args = pack(...)
    for i = 1, args.n do args[i] = deepcopy(args[i]) end
    return {
      returns = function(...)
        local answer = pack(...)
        oncalls[#oncalls + 1] = { args = args, answer = function() return unpack(answer, 1, answer.n) end }
        return s
      end,
      invokes = function(fn) oncalls[#oncalls + 1] = { args = args, answer = fn }; return s end,
    }
  end
  return s
end
setmetatable(stub, { __call = function(_, ...) return stub.new(...) end })

---------------------------------------------------------------------------------------------------
-- Mocks: every function of a table (deeply) replaced by a spy, or by a stub

local function apply(object, action)
  if type(object) ~= "table" then return end
  if is_spy(object) then return object[action](object) end
  for _, v in pairs(object) do apply(v, action) end
  return object
end

mock = {}
function mock.new(object, dostub, func, self, key)
  local visited = {}
  local function domock(value, owner, name)
    if type(value) == "table" then
      if is_spy(value) or visited[value] then return value end
      visited[value] = true
      for k, v in pairs(value) do value[k] = domock(v, value, k) end
      return value
    elseif type(value) == "function" then
      if dostub then return stub(owner, name, func) end
      if owner == nil then return spy.new(value) end
      return spy.on(owner, name)
    end
    return value
  end
  return domock(object, self, key)
end
function mock.clear(object) return apply(object, "clear") end
function mock.revert(object) return apply(object, "revert") end
setmetatable(mock, { __call = function(_, ...) return mock.new(...) end })

---------------------------------------------------------------------------------------------------
-- The spy assertions: assert.spy(s).was.called(n), .called_with(...), .returned_with(...)

local function showargs(args)
  local parts = {}
  for i = 1, args.n or #args do parts[i] = show(args[i]) end
  return "(" .. concat(parts, ", ") .. ")"
end

local function calls(s)
  local lines = {}
  for i, call in ipairs(s.calls) do lines[i] = "    " .. showargs(call) end
  return #lines == 0 and "  it was never called" or ("  its calls:\n" .. concat(lines, "\n"))
end

local function payload(state, what)
  local s = rawget(state, "payload")
  if type(s) == "function" then
    error("assert.spy(s)." .. what .. ": s is the original function; pass the spy that replaced it (spy.on(t, name) returns it)", 4)
  end
  if not is_spy(s) then
    error("'" .. what .. "' must be chained after assert.spy(s) or assert.stub(s), where s is a spy (spy.new, spy.on, stub)", 4)
  end
  return s
end

local function setpayload(state, args)
  if args then
    rawset(state, "payload", args[1])
    if args[2] ~= nil then rawset(state, "failure_message", args[2]) end
  end
end
register(nil, "modifier", "spy", setpayload)
register(nil, "modifier", "stub", setpayload)

local function counted(name, compare, words)
  register(nil, "assertion", name, function(state, args)
    local s = payload(state, name)
    local times = args[1]
    if times == nil and name ~= "called" then
      fail(sformat("bad argument #1 to '%s' (a count expected, got nil): assert.spy(s).was.%s(2)", name, name))
    end
    if times ~= nil and math.type(times) ~= "integer" then
      fail(sformat("bad argument #1 to '%s' (a whole count expected, got %s)", name, show(times)))
    end
    if times == nil and not rawget(state, "mod") then rawset(state, "mod", true); times = 0 end
    rawset(state, "count", #s.calls)
    rawset(state, "times", times)
    if times == nil then return #s.calls > 0 end
    return compare(#s.calls, times)
  end, function(_, state, custom)
    local s, times, count = rawget(state, "payload"), rawget(state, "times"), rawget(state, "count")
    if times == nil then return (custom and tostring(custom) .. "\n" or "") .. "expected the spy to be called\n" .. calls(s) end
    return (custom and tostring(custom) .. "\n" or "") .. sformat("expected the spy to be called %s%d time%s, it was called %d time%s\n%s",
      words, times, times == 1 and "" or "s", count, count == 1 and "" or "s", calls(s))
  end, function(_, state, custom)
    local s, times = rawget(state, "payload"), rawget(state, "times")
    if times == 0 or times == nil then return (custom and tostring(custom) .. "\n" or "") .. "expected the spy not to be called\n" .. calls(s) end
    return (custom and tostring(custom) .. "\n" or "") .. sformat("expected the spy not to be called %s%d time%s\n%s", words, times, times == 1 and "" or "s", calls(s))
  end)
end
counted("called", function(count, times) return count == times end, "")
counted("called_at_least", function(count, times) return count >= times end, "at least ")
counted("called_at_most", function(count, times) return count <= times end, "at most ")
counted("called_more_than", function(count, times) return count > times end, "more than ")
counted("called_less_than", function(count, times) return count < times end, "less than ")

local function withargs(name, list, verb)
  register(nil, "assertion", name, function(state, args)
    local s = payload(state, name)
    return lastmatch(s[list], args) ~= nil
  end, function(args, state, custom)
    return (custom and tostring(custom) .. "\n" or "") .. "expected the spy to be " .. verb .. " " .. showargs(args) .. "\n" .. calls(rawget(state, "payload"))
  end, function(args, _, custom)
    return (custom and tostring(custom) .. "\n" or "") .. "expected the spy not to be " .. verb .. " " .. showargs(args)
  end)
end
withargs("called_with", "calls", "called with")
withargs("returned_with", "returnvals", "returned with")

return { spy = spy, stub = stub, mock = mock, match = match }

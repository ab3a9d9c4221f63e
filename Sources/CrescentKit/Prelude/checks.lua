-- checks.lua: the built-in assertions and modifiers of `crescent test`, luassert's names and
-- verdicts with crescent's messages (the values, a table of differences), registered with the
-- engine assertions.lua returns; loaded after it in each spec file's host. Returns nothing.

local E = ...
local type, pairs, ipairs, tostring, error = type, pairs, ipairs, tostring, error
local sformat = string.format
local pack, unpack = table.pack, table.unpack
local getmt = debug.getmetatable
local register, namespaces, sayings = E.register, E.namespaces, E.say._registry
local show, mismatch, deepcompare, callable, hastostring = E.show, E.mismatch, E.deepcompare, E.callable, E.hastostring
-- A wrong argument to an assertion is the spec's failure, not an error: busted binds luassert's
-- own argument checks to its `fail`, so a spec author sees the same outcome under both.
local fail = E.fail

---------------------------------------------------------------------------------------------------
-- The built-in assertions (luassert's, with crescent's messages)

local function set_message(state, text) if text ~= nil then rawset(state, "failure_message", text) end end
local function phrase(custom, default) return custom and tostring(custom) or default end

local function builtin(name, callback, positive, negative)
  register(nil, "assertion", name, callback, positive, negative)
end

-- As luassert, an assertion given fewer values than it compares fails, whatever its modifiers
-- (`assert.falsy(f())` of an f that returns nothing is no pass).
local function needs(name, count, args)
  if args.n < count then
    E.fail(sformat("the '%s' function requires a minimum of %d arguments, got: %d", name, count, args.n))
  end
end

local function equals(state, args) needs("equals", 2, args); set_message(state, args[3]); return args[1] == args[2] end
builtin("equals", equals,
  function(a, _, custom) return mismatch(phrase(custom, "expected the values to be equal"), a[1], a[2]) end,
  function(a, _, custom) return phrase(custom, "expected the values to differ") .. "\n  both: " .. show(a[2]) end)
local function same(state, args)
  needs("same", 2, args)
  set_message(state, args[3])
  if type(args[1]) == "table" and type(args[2]) == "table" then return deepcompare(args[1], args[2], true) end
  return args[1] == args[2]
end
builtin("same", same,
  function(a, _, custom) return mismatch(phrase(custom, "expected the values to be the same"), a[1], a[2]) end,
  function(a, _, custom) return phrase(custom, "expected the values not to be the same") .. "\n  both: " .. show(a[2]) end)

local function truthy(state, args) needs("truthy", 1, args); set_message(state, args[2]); return args[1] ~= nil and args[1] ~= false end
builtin("truthy", truthy,
  function(a, _, custom) return phrase(custom, "expected a truthy value") .. ", got " .. show(a[1]) end,
  function(a, _, custom) return phrase(custom, "expected a falsy value") .. ", got " .. show(a[1]) end)
builtin("falsy", function(state, args) needs("falsy", 1, args); return not truthy(state, args) end,
  function(a, _, custom) return phrase(custom, "expected a falsy value") .. ", got " .. show(a[1]) end,
  function(a, _, custom) return phrase(custom, "expected a truthy value") .. ", got " .. show(a[1]) end)

local function constant(name, value)
  builtin(name, function(state, args) set_message(state, args[2]); return args[1] == value end,
    function(a, _, custom) return phrase(custom, "expected " .. tostring(value)) .. ", got " .. show(a[1]) end,
    function(a, _, custom) return phrase(custom, "expected a value other than " .. tostring(value)) end)
end
constant("true", true)
constant("false", false)

for _, kind in ipairs({ "nil", "boolean", "number", "string", "table", "function", "userdata", "thread" }) do
  -- As luassert: no value at all (`assert.is_nil(f())` of an f returning nothing) is nil.
  builtin(kind, function(state, args) set_message(state, args[2]); return type(args[1]) == kind end,
    function(a, _, custom)
      if kind == "nil" then return phrase(custom, "expected nil") .. ", got " .. show(a[1]) end
      return phrase(custom, "expected a " .. kind) .. ", got " .. type(a[1]) .. " " .. show(a[1])
    end,
    function(a, _, custom)
      if kind == "nil" then return phrase(custom, "expected a value, got nil") end
      return phrase(custom, "expected a value that is not a " .. kind) .. ", got " .. show(a[1])
    end)
end

local function matches(state, args)
  local pattern, actual = args[1], args[2]
  if type(pattern) ~= "string" then fail("bad argument #1 to 'matches' (string expected, got " .. type(pattern) .. ")") end
  -- assert.matches("Paris", view_text): the function where its result goes.
  if type(actual) == "function" then
    fail("bad argument #2 to 'matches' (string expected, got a function: call it, as in assert.matches(pattern, view_text()))")
  end
  local init, plain, custom = args[3], args[4], nil
  for i = 3, args.n do
    if args[i] and type(args[i]) ~= "boolean" and not tonumber(args[i]) then
      custom = args[i]
      if i == 3 then init, plain = args[4], args[5] else plain = nil end
      break
    end
  end
  set_message(state, custom)
  if hastostring(actual) or type(actual) == "number" then actual = tostring(actual) else return false end
  if plain then return actual:find(pattern, init, true) ~= nil, pack(pattern) end
  local found = pack(actual:match(pattern, init))
  return found[1] ~= nil, found
end
builtin("matches", matches,
  function(a, _, custom)
    return sformat("%s\n  pattern: %s\n  actual:  %s", phrase(custom, "expected the string to match"), show(a[1]), show(a[2]))
  end,
  function(a, _, custom)
    return sformat("%s\n  pattern: %s\n  actual:  %s", phrase(custom, "expected the string not to match"), show(a[1]), show(a[2]))
  end)
namespaces.assertion.match = namespaces.assertion.matches
namespaces.assertion.equal = namespaces.assertion.equals

builtin("near", function(state, args)
  local expected, actual, tolerance = tonumber(args[1]), tonumber(args[2]), tonumber(args[3])
  if not (expected and actual and tolerance) then
    fail("bad arguments to 'near' (expected, actual and tolerance numbers expected)")
  end
  set_message(state, args[4])
  return actual >= expected - tolerance and actual <= expected + tolerance
end, function(a, _, custom)
  return phrase(custom, "expected the values to be near") .. sformat("\n  expected: %s +/- %s\n  actual:   %s", show(a[1]), show(a[3]), show(a[2]))
end, function(a, _, custom)
  return phrase(custom, "expected the values not to be near") .. sformat("\n  expected: not %s +/- %s\n  actual:   %s", show(a[1]), show(a[3]), show(a[2]))
end)

builtin("unique", function(state, args)
  local list, deep = args[1], args[2]
  if type(deep) ~= "boolean" then set_message(state, args[2]); deep = args[3] else set_message(state, args[3]) end
  for k, v in pairs(list) do
    for k2, v2 in pairs(list) do
      if k ~= k2 and (v == v2 or (deep and deepcompare(v, v2, true))) then return false end
    end
  end
  return true
end, function(a, _, custom) return phrase(custom, "expected the values to be unique") .. ": " .. show(a[1]) end,
   function(a, _, custom) return phrase(custom, "expected the values not to be unique") .. ": " .. show(a[1]) end)

builtin("returned_arguments", function(_, args) return args[1] == args.n - 1 end,
  function(a) return sformat("expected %s returned values, got %d", show(a[1]), a.n - 1) end,
  function(a) return sformat("expected other than %s returned values", show(a[1])) end)

-- assert.error(fn[, expected[, message]]): fn (a function or callable table) raises; a string error
-- is compared without its `file:line: ` position, as luassert does. A crescent service error
-- ({ code, message }) compares its message with an expected string.
local function caught(state, fn, what)
  if not callable(fn) then
    -- Named as the assertion, not as Lua's `error` (luassert's wording read as the global's).
    fail(sformat("bad argument #1 to 'assert.%s' (the function that raises expected, got %s: wrap the code that raises in a "
      .. "function, as assert.%s(function() f(x) end))", what, type(fn), what))
  end
  local ok, err = pcall(fn)
  if type(err) == "string" then err = err:gsub("^.-:%d+: ", "", 1) end
  rawset(state, "caught", { ok = ok, err = err })
  return ok, err
end

-- What assert.error returns, as luassert: its arguments with the function replaced by the error
-- it raised (or by what it returned), so `local err = assert.has_error(fn)` reads the error.
local function returned(args, err)
  local values = pack(unpack(args, 1, args.n))
  values[1] = err
  return values
end

builtin("error", function(state, args)
  local ok, err = caught(state, args[1], "error")
  local values = returned(args, err)
  local expected = args[2]
  set_message(state, args[3])
  if ok then return false, values end
  if expected == nil then return true, values end
  if type(err) == "table" and getmt(err) == nil and type(expected) == "string" and err.message ~= nil then
    return tostring(err.message) == expected or tostring(err.message):gsub("^.-:%d+: ", "", 1) == expected, values
  end
  if type(expected) == "string" then
    if hastostring(err) then err = tostring(err); values[1] = err end
    if type(err) == "string" then return err == expected, values end
  elseif type(expected) == "number" and type(err) == "string" then
    return tostring(expected) == tostring(tonumber(err)), values
  end
  return deepcompare(expected, err, true), values
end, function(a, state, custom)
  local got = rawget(state, "caught")
  if got.ok then return phrase(custom, "expected an error, but the function returned") end
  return mismatch(phrase(custom, "the error differs"), a[2], got.err)
end, function(_, state, custom)
  return phrase(custom, "expected no error") .. ", got " .. tostring(rawget(state, "caught").err)
end)
namespaces.assertion.errors = namespaces.assertion.error

builtin("error_matches", function(state, args)
  local pattern, init, plain = args[2], args[3], args[4]
  if args.n < 2 then fail(sformat("the 'error_matches' function requires a minimum of 2 arguments, got: %d", args.n)) end
  if pattern ~= nil and type(pattern) ~= "string" then
    fail("bad argument #2 to 'error_matches' (a pattern string expected, got " .. type(pattern) .. ")")
  end
  for i = 3, args.n do
    if args[i] and type(args[i]) ~= "boolean" and not tonumber(args[i]) then
      set_message(state, args[i])
      if i == 3 then init, plain = args[4], args[5] end
      break
    end
  end
  local ok, err = caught(state, args[1], "error_matches")
  -- As luassert: the arguments with the error in the function's place, or the captures on a match.
  local values = returned(args, err)
  if ok then return false, values end
  if err == nil and pattern == nil then return true, pack() end
  if hastostring(err) or type(err) == "number" or type(err) == "boolean" then err = tostring(err); values[1] = err end
  if type(err) ~= "string" then return false, values end
  if plain then
    if err:find(pattern, init, true) ~= nil then return true, pack(pattern) end
    return false, values
  end
  local found = pack(err:match(pattern, init))
  if found[1] ~= nil then return true, found end
  return false, values
end, function(a, state, custom)
  local got = rawget(state, "caught")
  if got.ok then return phrase(custom, "expected an error, but the function returned") end
  return sformat("%s\n  pattern: %s\n  error:   %s", phrase(custom, "expected the error to match"), show(a[2]), show(got.err))
end, function(_, state, custom)
  return phrase(custom, "expected no error matching") .. ", got " .. tostring(rawget(state, "caught").err)
end)
for _, alias in ipairs({ "error_match", "matches_error", "match_error" }) do
  namespaces.assertion[alias] = namespaces.assertion.error_matches
end

local function identity(state) return state end
for _, word in ipairs({ "is", "are", "was", "has", "does", "been" }) do register(nil, "modifier", word, identity) end
local function negate(state) rawset(state, "mod", not rawget(state, "mod")); return state end
register(nil, "modifier", "not", negate)
register(nil, "modifier", "no", negate)
register(nil, "modifier", "message", function(state, args) rawset(state, "failure_message", args and args[1]) end)

-- luassert's array modifier and its assertion: assert.array(t).has.holes([length]) and
-- .has.no.holes([length]); `holes` returns the first missing index.
register(nil, "modifier", "array", function(state, args)
  if args == nil then return state end
  if args.n == 0 then fail("assert.array: no array given (assert.array(t).has.no.holes())") end
  if rawget(state, "array") ~= nil then fail("assert.array: an array is already set in this chain") end
  rawset(state, "array", args[1])
  return state
end)
builtin("holes", function(state, args)
  local list = rawget(state, "array")
  if list == nil then fail("holes: no array set; use assert.array(t).has.holes()") end
  local length = args[1]
  if length == nil then
    length = 0
    for key in pairs(list) do
      if math.type(key) == "integer" and key > length then length = key end
    end
  end
  if type(length) ~= "number" then fail("holes: the array's length must be a number, got " .. show(length)) end
  for i = 1, length do
    if list[i] == nil then return true, pack(i) end
  end
  return false, pack()
end, function(_, _, custom) return phrase(custom, "expected the array to have holes, but none was found") end,
  function(_, state, custom)
    local list, first = rawget(state, "array"), nil
    for i = 1, math.huge do if list[i] == nil then first = i break end end
    return phrase(custom, "expected the array to have no holes, but one is at position " .. tostring(first))
  end)

---------------------------------------------------------------------------------------------------
-- luassert's English messages, for assertions registered with say keys

for key, text in pairs({
  ["assertion.same.positive"] = "Expected objects to be the same.\nPassed in:\n%s\nExpected:\n%s",
  ["assertion.same.negative"] = "Expected objects to not be the same.\nPassed in:\n%s\nDid not expect:\n%s",
  ["assertion.equals.positive"] = "Expected objects to be equal.\nPassed in:\n%s\nExpected:\n%s",
  ["assertion.equals.negative"] = "Expected objects to not be equal.\nPassed in:\n%s\nDid not expect:\n%s",
  ["assertion.truthy.positive"] = "Expected to be truthy, but value was:\n%s",
  ["assertion.truthy.negative"] = "Expected to not be truthy, but value was:\n%s",
  ["assertion.falsy.positive"] = "Expected to be falsy, but value was:\n%s",
  ["assertion.falsy.negative"] = "Expected to not be falsy, but value was:\n%s",
  ["assertion.error.positive"] = "Expected a different error.\nCaught:\n%s\nExpected:\n%s",
  ["assertion.error.negative"] = "Expected no error, but caught:\n%s",
  ["assertion.internal.argtolittle"] = "the '%s' function requires a minimum of %s arguments, got: %s",
  ["assertion.internal.badargtype"] = "bad argument #%s to '%s' (%s expected, got %s)",
}) do sayings.en[key] = text end



-- assertions.lua: the assertions of `crescent test`, luassert's engine with busted's names, loaded
-- in each test's host before doubles.lua and testing.lua. The chunk takes the host's testing
-- primitives (T) and the run's options ({ update }), defines the globals `assert`, `view_text` and
-- `view_json`, and returns what the others need (see the end of the file).
--
-- As in luassert, `assert.X_Y.Z(...)` splits its keys into words at `_` and `.`: modifiers (`is`,
-- `are`, `was`, `has`, `does`, `not`, `no`) and one assertion, found in a registry that
-- `assert:register` extends (with `say` messages). The built-in assertions keep crescent's own
-- messages (the values, a table of differences); registered ones use their say keys.
--
-- A failed assertion raises a Failure: a table carrying the message and the spec's file:line (the
-- first frame outside the prelude), which the runner reports as it is, without a traceback.

local T, options = ...
local type, pairs, ipairs, tostring, select, error = type, pairs, ipairs, tostring, select, error
local getinfo, sformat, concat = debug.getinfo, string.format, table.concat
local pack, unpack = table.pack, table.unpack
local getmt = debug.getmetatable

---------------------------------------------------------------------------------------------------
-- Where: the first caller outside the prelude

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
-- Failures: a table the runner recognises, carrying the spec's file:line

local Failure = {}
Failure.__index = Failure
Failure.__tostring = function(f) return f.where .. ": " .. f.message end

local function fail(message)
  error(setmetatable({ message = message, where = where(2) }, Failure), 0)
end

local function show(v)
  if type(v) == "string" then return (sformat("%q", v):gsub("\\\n", "\\n")) end
  return inspect(v, { depth = 2, width = 60, newline = " ", indent = "" })
end

local function callable(v)
  return type(v) == "function" or type((getmt(v) or {}).__call) == "function"
end

local function hastostring(v)
  return type(v) == "string" or type((getmt(v) or {}).__tostring) == "function"
end

---------------------------------------------------------------------------------------------------
-- Deep comparison as luassert's: tables compare key by key (their metatables' __eq used below the
-- top level), anything else with ==.

local function deepcompare(t1, t2, ignore_mt, cycles)
  if type(t1) ~= "table" or type(t2) ~= "table" then return t1 == t2 end
  local mt1, mt2 = getmt(t1), getmt(t2)
  if mt1 and mt1 == mt2 and mt1.__eq then
    if not ignore_mt then return t1 == t2 end
  elseif rawequal(t1, t2) then
    return true
  end
  cycles = cycles or {}
  local seen = cycles[t1]
  if seen and seen[t2] then return true end
  cycles[t1] = seen or {}
  cycles[t1][t2] = true
  for k, v1 in next, t1 do
    local v2 = t2[k]
    if v2 == nil or not deepcompare(v1, v2, nil, cycles) then return false end
  end
  for k in next, t2 do
    if t1[k] == nil then return false end
  end
  return true
end

-- Path-by-path differences of two values, for messages: { { path, expected, actual }... }.
local MISSING = setmetatable({}, { __tostring = function() return "(missing)" end })
local function differences(expected, actual, path, out, seen)
  if deepcompare(expected, actual) then return out end
  if type(expected) ~= "table" or type(actual) ~= "table" or seen[expected] then
    out[#out + 1] = { path, expected, actual }
    return out
  end
  seen[expected] = true
  local keys, order = {}, {}
  for k in next, expected do if not keys[k] then keys[k] = true; order[#order + 1] = k end end
  for k in next, actual do if not keys[k] then keys[k] = true; order[#order + 1] = k end end
  table.sort(order, function(a, b)
    if type(a) == type(b) and (type(a) == "number" or type(a) == "string") then return a < b end
    return type(a) < type(b)
  end)
  for _, k in ipairs(order) do
    local step = type(k) == "string" and k:match("^[%a_][%w_]*$") and ("." .. k) or ("[" .. show(k) .. "]")
    local e, a = rawget(expected, k), rawget(actual, k)
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

---------------------------------------------------------------------------------------------------
-- say: luassert's message strings, by key, in namespaces (languages)

local sayings, current, fallback = { en = {} }, "en", "en"
local say = setmetatable({
  _VERSION = "Say 1.3",
  _registry = sayings,
  set_namespace = function(_, namespace) current = namespace; sayings[namespace] = sayings[namespace] or {} end,
  set_fallback = function(_, namespace) fallback = namespace; sayings[namespace] = sayings[namespace] or {} end,
  set = function(_, key, value) sayings[current][key] = value end,
}, {
  __call = function(_, key, vars)
    if vars ~= nil and type(vars) ~= "table" then
      error(sformat("expected parameter table to be a table, got '%s'", type(vars)), 2)
    end
    vars = vars or {}
    local text = sayings[current][key] or sayings[fallback][key]
    if text == nil then return nil end
    local strings = {}
    for i = 1, math.max(vars.n or 0, #vars) do strings[i] = tostring(vars[i]) end
    return #strings > 0 and tostring(text):format(unpack(strings)) or tostring(text)
  end,
  __index = function(_, key) return sayings[key] end,
})

---------------------------------------------------------------------------------------------------
-- Formatting arguments for say messages, as luassert's default formatters do

local formatters = {}
local function format_argument(v, extra)
  for _, formatter in ipairs(formatters) do
    local text = formatter(v, extra)
    if text ~= nil then return text end
  end
  if type(v) == "string" then return "(string) '" .. v .. "'" end
  if type(v) == "table" then return "(" .. tostring(v) .. ") " .. inspect(v, { depth = 3 }) end
  if v == nil then return "(nil)" end
  return "(" .. type(v) .. ") " .. tostring(v)
end

local function format(_, args)
  local nofmt, extra = args.nofmt or {}, args.fmtargs or {}
  for i = 1, args.n or #args do
    if not nofmt[i] then args[i] = format_argument(args[i], extra[i]) end
  end
  return args
end

---------------------------------------------------------------------------------------------------
-- The registry and the chain

local namespaces = { assertion = {}, modifier = {}, matcher = {} }

local function names(nspace)
  local list = {}
  for name in pairs(namespaces[nspace]) do list[#list + 1] = name end
  for name in pairs(namespaces.modifier) do list[#list + 1] = name end
  table.sort(list)
  return list
end

-- The closest registered names to `word`, for the error of one that does not exist.
local function close(word, list)
  local function distance(a, b)
    local row = {}
    for j = 0, #b do row[j] = j end
    for i = 1, #a do
      local previous, diagonal = row[0], row[0]
      row[0] = i
      for j = 1, #b do
        previous = row[j]
        row[j] = math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a:sub(i, i) == b:sub(j, j) and 0 or 1))
        diagonal = previous
      end
    end
    return row[#b]
  end
  local found = {}
  for _, name in ipairs(list) do
    if distance(word, name) <= math.max(1, #word // 3) or (#word > 2 and name:find(word, 1, true)) then
      found[#found + 1] = name
    end
  end
  return found
end

-- Joins the words of a chain into registered keys (longest first, from the end), as luassert.
local function extract(nspace, tokens, what)
  local keys, key, i = {}, nil, #tokens
  local space = namespaces[nspace]
  while i > 0 do
    key = key and (tokens[i] .. "_" .. key) or tokens[i]
    local longer = i > 1 and (tokens[i - 1] .. "_" .. key) or nil
    while i > 1 and longer and space[longer] do
      key = longer
      i = i - 1
      longer = i > 1 and (tokens[i - 1] .. "_" .. key) or nil
    end
    if namespaces.modifier[key] or space[key] then
      table.insert(keys, 1, key)
      key = nil
    end
    i = i - 1
  end
  if key then
    -- Name the word that is not known (is_equl: equl), and the registered names close to it.
    local unknown = key
    for word in key:gmatch("[^_]+") do
      if not (namespaces.modifier[word] or space[word]) then unknown = word; break end
    end
    local near = close(unknown, names(nspace))
    error(sformat("%s.%s: there is no %s or modifier '%s'%s; add one with assert:register(%q, %q, fn, ...)",
      what, concat(tokens, "_"), nspace, unknown,
      #near > 0 and (" (did you mean " .. concat(near, ", ") .. "?)") or "", nspace, unknown), 3)
  end
  return keys
end

local State = {}
local function newstate() return setmetatable({ mod = true, tokens = {} }, State) end

-- A chain's next key: its words join the chain's tokens (assert's and match's chains alike).
local function chainindex(self, key)
  if type(key) ~= "string" then return nil end
  local tokens = rawget(self, "tokens")
  for token in key:lower():gmatch("[^_]+") do tokens[#tokens + 1] = token end
  return self
end
State.__index = chainindex

local function message(entry, state, args)
  local key = rawget(state, "mod") and entry.positive or entry.negative
  local custom = rawget(state, "failure_message")
  if custom ~= nil and not hastostring(custom) then custom = format_argument(custom) end
  local text
  if type(key) == "function" then
    text = key(args, state, custom)
    custom = nil
  elseif key ~= nil then
    text = say(key, format(nil, args))
  end
  if text and custom then return tostring(custom) .. "\n" .. text end
  return text or (custom and tostring(custom)) or "assertion failed!"
end

State.__call = function(self, ...)
  local keys = extract("assertion", rawget(self, "tokens"), "assert")
  local assertion
  for _, key in ipairs(keys) do assertion = namespaces.assertion[key] or assertion end
  local args = pack(...)
  if not assertion then
    rawset(self, "tokens", {})
    for _, key in ipairs(keys) do
      local modifier = namespaces.modifier[key]
      if modifier then modifier.callback(self, args, 2) end
    end
    return self
  end
  for _, key in ipairs(keys) do
    local modifier = namespaces.modifier[key]
    if modifier then modifier.callback(self) end
  end
  local ok, results = assertion.callback(self, args, 2)
  if (not ok) == rawget(self, "mod") then fail(message(assertion, self, args)) end
  if results then return unpack(results, 1, results.n or #results) end
  return ...
end

local function register(_, nspace, name, callback, positive, negative)
  if type(nspace) ~= "string" or type(name) ~= "string" or not callable(callback) then
    error("bad arguments to 'assert:register' (namespace, name, callback[, positive_message, negative_message] expected)", 2)
  end
  namespaces[nspace] = namespaces[nspace] or {}
  namespaces[nspace][name:lower()] = { callback = callback, name = name:lower(), positive = positive, negative = negative }
end

---------------------------------------------------------------------------------------------------
-- The built-in assertions (luassert's, with crescent's messages)

local function set_message(state, text) if text ~= nil then rawset(state, "failure_message", text) end end
local function phrase(custom, default) return custom and tostring(custom) or default end

local function builtin(name, callback, positive, negative)
  register(nil, "assertion", name, callback, positive, negative)
end

local function equals(state, args) set_message(state, args[3]); return args[1] == args[2] end
builtin("equals", equals,
  function(a, _, custom) return mismatch(phrase(custom, "expected the values to be equal"), a[1], a[2]) end,
  function(a, _, custom) return phrase(custom, "expected the values to differ") .. "\n  both: " .. show(a[2]) end)
local function same(state, args)
  set_message(state, args[3])
  if type(args[1]) == "table" and type(args[2]) == "table" then return deepcompare(args[1], args[2], true) end
  return args[1] == args[2]
end
builtin("same", same,
  function(a, _, custom) return mismatch(phrase(custom, "expected the values to be the same"), a[1], a[2]) end,
  function(a, _, custom) return phrase(custom, "expected the values not to be the same") .. "\n  both: " .. show(a[2]) end)

local function truthy(state, args) set_message(state, args[2]); return args[1] ~= nil and args[1] ~= false end
builtin("truthy", truthy,
  function(a, _, custom) return phrase(custom, "expected a truthy value") .. ", got " .. show(a[1]) end,
  function(a, _, custom) return phrase(custom, "expected a falsy value") .. ", got " .. show(a[1]) end)
builtin("falsy", function(state, args) return not truthy(state, args) end,
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
  builtin(kind, function(state, args) set_message(state, args[2]); return args.n > 0 and type(args[1]) == kind end,
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
  if type(pattern) ~= "string" then error("bad argument #1 to 'matches' (string expected, got " .. type(pattern) .. ")", 4) end
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
    error("bad arguments to 'near' (expected, actual and tolerance numbers expected)", 4)
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
    error(sformat("bad argument #1 to '%s' (function or callable object expected, got %s)", what, type(fn)), 4)
  end
  local ok, err = pcall(fn)
  if type(err) == "string" then err = err:gsub("^.-:%d+: ", "", 1) end
  rawset(state, "caught", { ok = ok, err = err })
  return ok, err
end

builtin("error", function(state, args)
  local ok, err = caught(state, args[1], "error")
  local expected = args[2]
  set_message(state, args[3])
  if ok then return false, pack(err) end
  if expected == nil then return true, pack(err) end
  if type(err) == "table" and getmt(err) == nil and type(expected) == "string" and err.message ~= nil then
    return tostring(err.message) == expected or tostring(err.message):gsub("^.-:%d+: ", "", 1) == expected, pack(err)
  end
  if type(expected) == "string" then
    if hastostring(err) then err = tostring(err) end
    if type(err) == "string" then return err == expected, pack(err) end
  elseif type(expected) == "number" and type(err) == "string" then
    return tostring(expected) == tostring(tonumber(err)), pack(err)
  end
  return deepcompare(expected, err, true), pack(err)
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
  for i = 3, args.n do
    if args[i] and type(args[i]) ~= "boolean" and not tonumber(args[i]) then
      set_message(state, args[i])
      if i == 3 then init, plain = args[4], args[5] end
      break
    end
  end
  local ok, err = caught(state, args[1], "error_matches")
  if ok then return false end
  if err == nil and pattern == nil then return true end
  if hastostring(err) or type(err) == "number" or type(err) == "boolean" then err = tostring(err) end
  if type(err) ~= "string" then return false end
  if plain then return err:find(pattern, init, true) ~= nil, pack(pattern) end
  local found = pack(err:match(pattern, init))
  return found[1] ~= nil, found
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

---------------------------------------------------------------------------------------------------
-- The `assert` global: luassert's object (register, formatters, parameters) whose other keys start
-- a chain; called, the plain assert

local parameters = {}
local level_mt = {}
assert = setmetatable({
  state = newstate,
  register = register,
  unregister = function(_, nspace, name) if namespaces[nspace] then namespaces[nspace][name:lower()] = nil end end,
  add_formatter = function(_, formatter) table.insert(formatters, 1, formatter) end,
  remove_formatter = function(_, formatter)
    for i, f in ipairs(formatters) do if f == formatter then table.remove(formatters, i); break end end
  end,
  format = format,
  set_parameter = function(_, name, value) parameters[name] = value end,
  get_parameter = function(_, name) return parameters[name] end,
  add_spy = function() end,
  snapshot = function() return { revert = function() end } end,
  level = function(_, level) return setmetatable({ level = level }, level_mt) end,
  get_level = function(_, level) return getmt(level) == level_mt and level.level or nil end,
}, {
  __call = function(_, v, ...)
    if not v then
      local text = select("#", ...) > 0 and (...) or "assertion failed!"
      fail(type(text) == "string" and text or show(text))
    end
    return v, ...
  end,
  __index = function(_, key) return newstate()[key] end,
})

return {
  where = where, Failure = Failure, fail = fail, show = show, callable = callable, deepcompare = deepcompare,
  mismatch = mismatch, register = register, newstate = newstate, namespaces = namespaces, extract = extract, chainindex = chainindex,
  say = say, format = format, format_argument = format_argument, formatters = formatters, builtin = builtin,
}

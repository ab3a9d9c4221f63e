-- assertions.lua: the assertions of `crescent test`, luassert's engine with busted's names, loaded
-- in each spec file's host before checks.lua (the built-in assertions), doubles.lua and testing.lua. The chunk takes the host's testing
-- primitives (T) and the run's options ({ update }), defines the globals `assert`, `view_text` and
-- `view_json`, and returns what the others need (see the end of the file).
--
-- As in luassert, `assert.X_Y.Z(...)` splits its keys into words at `_` and `.`: modifiers (`is`,
-- `are`, `was`, `has`, `does`, `not`, `no`) and one assertion, found in a registry that
-- `assert:register` extends (with `say` messages); checks.lua registers the built-in ones.
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

-- The message for a call written with '.' for ':' (a fake's handle) or ':' for '.' (a function
-- of `fake` or `clock`), in the words services, modules and controllers use for it.
local function callWith(signature, separator, example, thing, self)
  if separator == ":" then
    return signature .. ": call it with ':' on the " .. thing .. " (" .. example .. "), got " .. type(self) .. " as self"
  end
  return signature .. ": call it with '.', as " .. example .. ", not ':'"
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

-- t[k] as luassert reads it (through __index), but a lookup that raises (a host list read by a
-- record's field name says to index it) is a missing key: the assertion reports a mismatch.
local function lookup(t, mt, k)
  local v = rawget(t, k)
  if v ~= nil or mt == nil then return v end
  local ok, got = pcall(function() return t[k] end)
  if ok then return got end
  return nil
end

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
    local v2 = lookup(t2, mt2, k)
    if v2 == nil or not deepcompare(v1, v2, nil, cycles) then return false end
  end
  for k in next, t2 do
    if lookup(t1, mt1, k) == nil then return false end
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
  -- Padded by hand: string.format's widths stop at 99 (a long key or a deep path).
  local function pad(text) return text .. string.rep(" ", width - #text) end
  local lines = { "  " .. pad("path") .. "  expected  |  actual" }
  for i, row in ipairs(rows) do
    if i > 20 then lines[#lines + 1] = sformat("  ... (%d more differences)", #rows - 20); break end
    lines[#lines + 1] = sformat("  %s  %s  |  %s", pad(row[1] == "" and "(value)" or row[1]), render(row[2]), render(row[3]))
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
    -- A word of one or two letters is one edit from too many names (to: no) to suggest by letters.
    if (#word > 2 and distance(word, name) <= math.max(1, #word // 3)) or (#word > 2 and name:find(word, 1, true)) then
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
    -- Two letters swapped (ture) are two edits here: the host's closest name counts them as one.
    if #near == 0 and #unknown > 2 then near[1] = T.closest(unknown, names(nspace)) end
    -- A word tacked onto a whole chain (equal_to): the chain without it.
    if unknown == tokens[#tokens] and #tokens > 1 then
      local rest = concat(tokens, "_", 1, #tokens - 1)
      if space[rest] then table.insert(near, 1, what .. "." .. rest) end
    end
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
      -- Code under test (a module a spec requires) gets Lua's own assert, as under busted, where
      -- only the spec files' code sees luassert's: its message raised as it is, a table unwrapped.
      local caller = getinfo(2, "S")
      if caller and caller.what ~= "C" and not caller.source:find("_spec%.lua$") then
        if select("#", ...) == 0 then error("assertion failed!", 0) end
        error((...), 0)
      end
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
  say = say, format = format, format_argument = format_argument, formatters = formatters, hastostring = hastostring,
  callWith = callWith,
}

-- json.lua: Crescent's `json` global, the Lua face of the one JSON codec (Model's Value+JSON,
-- which the store, `--ui json` and remote answers use too), so every path writes and reads
-- JSON alike.
--
-- json.encode(v[, opts]) -> string      opts.indent: spaces (or a string) per level; default compact
--                                       opts.sortKeys: default true (deterministic output)
-- json.decode(s[, opts]) -> value       opts.maxDepth: nesting limit, 1 to 100, default 100
-- Option keys follow the one rule of Crescent's option tables: camelCase, as `maxBytes`; the
-- snake_case spellings of earlier releases (`sort_keys`, `max_depth`) keep working, and an
-- unknown key is an error that lists the options.
-- json.null                             unique sentinel for JSON null (in arrays and objects)
-- json.array([t]), json.object([t])     mark a table's shape; return it
--
-- The rule (the same on every path; README "json"):
--   * Numbers keep Lua's subtype: integers encode as integers (`3`), floats always carry a
--     fraction or an exponent (`3.0`, `1e+300`) in the fewest digits that read back exactly.
--   * NaN, the infinities, strings that are not valid UTF-8, functions, threads, userdata,
--     cycles, sparse arrays, tables mixing items and names and nesting past 100 levels are
--     errors naming the place (`value.items[3]`) and the fix, never written as null or repaired.
--   * Shape: a table with keys 1..n is an array, one with string keys an object, and an unmarked
--     empty table is an empty array `[]`, as everywhere in Crescent (a store record's `tags = {}`
--     reads back as `[]`); json.object() or json.object(t) marks an empty object. The marks are
--     metatables whose `__jsontype` is "array" / "object"; decoded arrays and objects carry them
--     and decoded nulls are json.null, so `[]`, `{}` and keys holding null round-trip.
--   * A value whose metatable has `__tojson` is replaced by __tojson(value) before encoding (on
--     every path: marks.lua's `resolve`); a __tojson that is not a function or that raises is an
--     error naming the place.
--   * A mark on a table whose contents contradict it (json.object{1, 2}) is an error, here and
--     when a marked table is encoded after it changed.
--   * Errors are raised at the caller's level, naming json.encode / json.decode.

local type, next, pairs, rawequal, rawget, getmetatable, setmetatable = type, next, pairs,
  rawequal, rawget, getmetatable, setmetatable
local error, tostring = error, tostring
local math_type, srep, sort = math.type, string.rep, table.sort

-- The chunk takes json.null, the shape metatables and `resolve` (marks.lua), made before the
-- module loads, the Swift halves of encode and decode (ModelBinding+json.swift), and the host's
-- `resembles(name, names)`, the closest of `names` for an unknown option's error.
local NULL, ARRAY_MT, OBJECT_MT, resolve, swift_encode, swift_decode, resembles = ...

local json = {}

json.null = NULL

-- What getmetatable answers for a marked table (marks.lua): the marks' read-only faces.
local FACES = { [rawget(ARRAY_MT, "__metatable")] = true, [rawget(OBJECT_MT, "__metatable")] = true }

-- What a table holds that the shape `name` cannot: "array items" for an object, "named fields"
-- (or another key) for an array; nil when it fits.
local function misfit(name, t)
  for k in next, t do
    if name == "object" and type(k) ~= "string" then
      return math_type(k) == "integer" and "array items" or "a " .. type(k) .. " key"
    elseif name == "array" and math_type(k) ~= "integer" then
      return type(k) == "string" and "named fields" or "a " .. type(k) .. " key"
    end
  end
  return nil
end

local function mark(name, mt)
  return function(t)
    if t == nil then t = {} end
    if type(t) ~= "table" or rawequal(t, NULL) then
      error("json." .. name .. ": expected a table, got " .. type(t), 2)
    end
    local current = getmetatable(t)
    if current ~= nil and not FACES[current] then
      error("json." .. name .. ": the table already has a metatable (set __jsontype = \"" .. name
        .. "\" in it instead)", 2)
    end
    -- A mark says what a table is; one that contradicts the contents would be ignored, silently.
    local found = misfit(name, t)
    if found then
      error("json." .. name .. ": the table holds " .. found .. ", which an " .. name .. " cannot"
        .. (name == "object" and " (an object has only named fields)" or " (an array has only items 1 to n)"), 2)
    end
    return setmetatable(t, mt)
  end
end
json.array = mark("array", ARRAY_MT)
json.object = mark("object", OBJECT_MT)

-- `opts` with each key under its one spelling (`spellings` maps every accepted key to it), or an
-- error at the caller of `fn` naming an unknown key and the options.
local function read_options(fn, opts, spellings, names)
  if opts == nil then return {} end
  if type(opts) ~= "table" then error(fn .. ": opts must be a table, got " .. type(opts), 3) end
  local read = {}
  for key, value in pairs(opts) do
    local name = spellings[key]
    if not name then
      -- The closest of every accepted spelling (`sort_key` is one letter from `sort_keys`),
      -- named as the options list it.
      local accepted = {}
      for spelling in pairs(spellings) do accepted[#accepted + 1] = spelling end
      sort(accepted)
      local closest = resembles and type(key) == "string" and resembles(key, accepted)
      error(fn .. ": unknown option '" .. tostring(key) .. "' (options: " .. names
        .. (closest and "; did you mean '" .. spellings[closest] .. "'?" or "") .. ")", 3)
    end
    read[name] = value
  end
  return read
end

local encode_spellings = { indent = "indent", sortKeys = "sortKeys", sort_keys = "sortKeys" }
local decode_spellings = { maxDepth = "maxDepth", max_depth = "maxDepth" }

local MAX_DEPTH = 100

-- The error for an argument past `opts`, worded as the host's functions word it
-- (ExtraArguments.swift), at the caller: the first of `...` that is not nil (trailing nils are
-- no arguments), counted after the `count` taken.
local function check_extra(signature, takes, count, ...)
  local extra = table.pack(...)
  for i = 1, extra.n do
    if extra[i] ~= nil then error(signature .. ": argument #" .. count + i .. " is one too many (it takes " .. takes .. ")", 3) end
  end
end

function json.encode(v, opts, ...)
  -- `json:encode(t)`: the module (the global is a stand-in holding the same functions) as value.
  if type(v) == "table" and rawget(v, "encode") == json.encode then
    error("json.encode: call it with '.', as json.encode(value), not ':'", 2)
  end
  if select("#", ...) > 0 then check_extra("json.encode(value[, opts])", "a value and opts (optional)", 2, ...) end
  opts = read_options("json.encode", opts, encode_spellings, "indent, sortKeys")
  local indent = opts.indent
  if type(indent) == "number" then
    if indent < 0 or indent ~= indent then
      error("json.encode: opts.indent must be a number of spaces from 0 up, or a string, got " .. tostring(indent), 2)
    end
    indent = indent > 0 and srep(" ", indent // 1) or nil
  elseif indent ~= nil and type(indent) ~= "string" then
    error("json.encode: opts.indent must be a number of spaces or a string, got " .. type(indent), 2)
  end
  local sort_keys = opts.sortKeys
  if sort_keys == nil then
    sort_keys = true
  elseif type(sort_keys) ~= "boolean" then
    -- `sortKeys = "no"` read as true sorted the keys it asked to keep in place.
    error("json.encode: opts.sortKeys must be a boolean (true sorts the keys, false leaves them unsorted), got "
      .. type(sort_keys), 2)
  end
  local text, message = swift_encode(v, indent, sort_keys)
  if text == false then
    local ok, resolved, reason = resolve(v)
    if not ok then error("json.encode: value" .. resolved .. " " .. reason, 2) end
    text, message = swift_encode(resolved, indent, sort_keys, true)
  end
  if not text then error("json.encode: " .. message, 2) end
  return text
end

function json.decode(s, opts, ...)
  if type(s) == "table" and rawget(s, "decode") == json.decode then
    error("json.decode: call it with '.', as json.decode(text), not ':'", 2)
  end
  if select("#", ...) > 0 then check_extra("json.decode(text[, opts])", "a text and opts (optional)", 2, ...) end
  if type(s) ~= "string" then error("json.decode: expected a string, got " .. type(s), 2) end
  opts = read_options("json.decode", opts, decode_spellings, "maxDepth")
  local max_depth = opts.maxDepth or MAX_DEPTH
  if math_type(max_depth) ~= "integer" or max_depth < 1 or max_depth > MAX_DEPTH then
    error("json.decode: opts.maxDepth must be an integer from 1 to " .. MAX_DEPTH .. ", got "
      .. tostring(max_depth), 2)
  end
  local value, message = swift_decode(s, max_depth)
  if value == nil then error("json.decode: " .. message, 2) end
  return value
end

-- A name json does not have raises at the script's line with those it has and the closest, as
-- the host's libraries word it (timer, log): `json.decod(s)` was Lua's bare "attempt to call a
-- nil value (field 'decod')". Names starting with `__` read nil (tools ask them).
setmetatable(json, { __index = function(_, key)
  if type(key) ~= "string" or key:sub(1, 2) == "__" then return nil end
  local names = {}
  for name in next, json do names[#names + 1] = name end
  sort(names)
  local closest = resembles(key, names)
  -- Raised at the script's read: the first read of json goes through the first-use loader
  -- (a host frame) between it and here.
  local level = 2
  while level < 5 do
    local info = debug.getinfo(level, "S")
    if not info or info.source:sub(1, 11) ~= "=[crescent " then break end
    level = level + 1
  end
  error("no function 'json." .. key .. "' (json: " .. table.concat(names, ", ")
    .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", level)
end })

return json

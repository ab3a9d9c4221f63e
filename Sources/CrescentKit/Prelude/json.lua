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
--   * A value whose metatable has `__tojson` is replaced by __tojson(value) before encoding.
--   * Errors are raised at the caller's level, naming json.encode / json.decode.

local type, next, pairs, rawget, rawequal, getmetatable, setmetatable = type, next, pairs, rawget,
  rawequal, getmetatable, setmetatable
local error, tostring = error, tostring
local math_type, srep = math.type, string.rep

-- The chunk takes json.null and the shape metatables (marks.lua), made before the module loads,
-- and the Swift halves of encode and decode (ModelBinding+json.swift).
local NULL, ARRAY_MT, OBJECT_MT, swift_encode, swift_decode = ...

local json = {}

json.null = NULL

local function mark(name, mt)
  return function(t)
    if t == nil then t = {} end
    if type(t) ~= "table" or rawequal(t, NULL) then
      error("json." .. name .. ": expected a table, got " .. type(t), 2)
    end
    local current = getmetatable(t)
    if current ~= nil and current ~= ARRAY_MT and current ~= OBJECT_MT then
      error("json." .. name .. ": the table already has a metatable (set __jsontype = \"" .. name
        .. "\" in it instead)", 2)
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
      error(fn .. ": unknown option '" .. tostring(key) .. "' (options: " .. names .. ")", 3)
    end
    read[name] = value
  end
  return read
end

local encode_spellings = { indent = "indent", sortKeys = "sortKeys", sort_keys = "sortKeys" }
local decode_spellings = { maxDepth = "maxDepth", max_depth = "maxDepth" }

local MAX_DEPTH = 100

-- A copy of `v` with every value whose metatable has `__tojson` replaced by what it returns
-- (whose own parts are resolved in turn). Tables are copied with their shape mark; a table met
-- twice is copied once, so a cycle stays a cycle for the codec to name. Past the depth limit the
-- rest is left as it is, for the codec to refuse.
local function resolve(v, copies, depth)
  local tv = type(v)
  if (tv ~= "table" and tv ~= "userdata") or rawequal(v, NULL) then return v end
  local done = copies[v]
  if done ~= nil then return done end
  local original, mt = v, getmetatable(v)
  local tojson = type(mt) == "table" and rawget(mt, "__tojson")
  if tojson then
    local r = tojson(v)
    if rawequal(r, v) or type(r) ~= "table" then copies[v] = r; return r end
    v, mt = r, getmetatable(r)
  end
  if type(v) ~= "table" or depth > MAX_DEPTH then return v end
  local shape = type(mt) == "table" and rawget(mt, "__jsontype")
  local copy = setmetatable({}, shape == "array" and ARRAY_MT or shape == "object" and OBJECT_MT or nil)
  copies[original], copies[v] = copy, copy
  -- A protected metatable (a service's read-only model) keeps its fields from next: what pairs
  -- shows is what a script sees.
  local iterate = (mt ~= nil and type(mt) ~= "table") and pairs or function(t) return next, t end
  for k, item in iterate(v) do copy[k] = resolve(item, copies, depth + 1) end
  return copy
end

function json.encode(v, opts)
  opts = read_options("json.encode", opts, encode_spellings, "indent, sortKeys")
  local indent = opts.indent
  if type(indent) == "number" then indent = indent > 0 and srep(" ", indent // 1) or nil
  elseif indent ~= nil and type(indent) ~= "string" then
    error("json.encode: opts.indent must be a number of spaces or a string, got " .. type(indent), 2)
  end
  local sort_keys = opts.sortKeys ~= false
  local text, message = swift_encode(v, indent, sort_keys)
  if text == false then text, message = swift_encode(resolve(v, {}, 0), indent, sort_keys, true) end
  if not text then error("json.encode: " .. message, 2) end
  return text
end

function json.decode(s, opts)
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

return json

-- marks.lua: the values `json` marks JSON's null and a table's shape with, and the step that
-- replaces values having `__tojson` by what it returns. Uses only standard Lua 5.4.
--
-- The chunk takes nothing and returns `json.null` (a unique read-only sentinel), the metatables
-- `json.array` and `json.object` give a table, and `resolve`. They exist from the start, apart
-- from the `json` module (which loads when a script first touches it): values a service hands out
-- carry the marks (an empty array or object keeps its shape, a null in an array keeps its place),
-- every conversion to JSON's values (json.encode, the store, `--ui json`, remote answers, service
-- arguments) calls `resolve` when a part has `__tojson`, and the module, when it loads, takes these
-- very values.
--
-- The marks are shared by every marked table, so they are protected: getmetatable answers a
-- read-only face of the mark (`getmetatable(t).__jsontype` reads "array"; a write raises, so no
-- script can re-mark every `[]`), debug.getmetatable a copy, and setmetatable may still replace a
-- mark on one table (the host's shim allows it).

local error, setmetatable, getmetatable, rawget, rawequal, type, next, pairs, pcall, tostring =
  error, setmetatable, getmetatable, rawget, rawequal, type, next, pairs, pcall, tostring
local math_type, sfind, sgsub, concat = math.type, string.find, string.gsub, table.concat

local null = setmetatable({}, {
  __tostring = function() return "json.null" end,
  __newindex = function() error("json.null is read-only", 2) end,
  __metatable = false,
})

-- What getmetatable answers for a marked table: reads as the mark, refuses writes.
local function face(shape)
  return setmetatable({}, {
    __index = { __jsontype = shape },
    __newindex = function() error("json." .. shape .. "'s mark is read-only (every " .. shape .. " shares it)", 2) end,
    __metatable = false,
  })
end
local ARRAY_FACE, OBJECT_FACE = face("array"), face("object")
local ARRAY_MT = { __jsontype = "array", __metatable = ARRAY_FACE }
local OBJECT_MT = { __jsontype = "object", __metatable = OBJECT_FACE }

local MAX_DEPTH = 100

-- The step to key `k` as ValuePath writes it: `.name`, `["odd key"]`, `[3]`.
local function step(k)
  if math_type(k) == "integer" then return "[" .. k .. "]" end
  if type(k) == "string" and sfind(k, "^[A-Za-z_][A-Za-z0-9_]*$") then return "." .. k end
  return '["' .. sgsub(tostring(k), '["\\]', "\\%0") .. '"]'
end

-- The first `depth` keys of `trail` as a path, shortened past 10 steps as ValuePath shortens it.
local function path_of(trail, depth)
  local steps = {}
  for i = 1, depth do steps[i] = step(trail[i]) end
  if depth <= 10 then return concat(steps) end
  return concat(steps, "", 1, 4) .. "…(" .. (depth - 8) .. " more)…" .. concat(steps, "", depth - 3, depth)
end

-- The error `resolve` unwinds with: where and why a `__tojson` failed.
local Failure = {}

-- The shape mark a metatable (or what getmetatable answered for it) gives, or nil.
local function shape_of(mt)
  if rawequal(mt, ARRAY_FACE) then return ARRAY_MT end
  if rawequal(mt, OBJECT_FACE) then return OBJECT_MT end
  if type(mt) ~= "table" then return nil end
  local shape = rawget(mt, "__jsontype")
  return shape == "array" and ARRAY_MT or shape == "object" and OBJECT_MT or nil
end

-- A copy of `v` with every value whose metatable has `__tojson` replaced by what it returns
-- (whose own parts are resolved in turn). Tables are copied with their shape mark; a table met
-- twice is copied once, so a cycle stays a cycle for the codec to name. Past the depth limit the
-- rest is left as it is, for the codec to refuse. `trail` holds the keys down to `v`.
local function copy(v, copies, depth, trail)
  local tv = type(v)
  if (tv ~= "table" and tv ~= "userdata") or rawequal(v, null) then return v end
  local done = copies[v]
  if done ~= nil then return done end
  local original, mt = v, getmetatable(v)
  local tojson = type(mt) == "table" and rawget(mt, "__tojson")
  if tojson then
    if type(tojson) ~= "function" then
      error(setmetatable({ path = path_of(trail, depth),
        reason = "has a __tojson that is a " .. type(tojson) .. ": __tojson must be a function(value)" }, Failure))
    end
    local ok, r = pcall(tojson, v)
    if not ok then
      error(setmetatable({ path = path_of(trail, depth),
        reason = "has a __tojson that raised an error: " .. tostring(r) }, Failure))
    end
    if rawequal(r, v) or type(r) ~= "table" then copies[v] = r; return r end
    v, mt = r, getmetatable(r)
  end
  if type(v) ~= "table" or depth > MAX_DEPTH then return v end
  local result = setmetatable({}, shape_of(mt))
  copies[original], copies[v] = result, result
  -- A protected metatable (a service's read-only model) keeps its fields from next: what pairs
  -- shows is what a script sees.
  local iterate = (mt ~= nil and type(mt) ~= "table") and pairs or function(t) return next, t end
  for k, item in iterate(v) do
    trail[depth + 1] = k
    result[k] = copy(item, copies, depth + 1, trail)
  end
  trail[depth + 1] = nil
  return result
end

-- resolve(v) -> true, the copy; or false, the path inside `v` (`.x[2]`) and the reason
-- (`has a __tojson that raised an error: ...`) for the caller to name from its root.
local function resolve(v)
  local ok, r = pcall(copy, v, {}, 0, {})
  if ok then return true, r end
  if getmetatable(r) == Failure then return false, r.path, r.reason end
  error(r, 0)
end

return null, ARRAY_MT, OBJECT_MT, resolve

-- marks.lua: the values `json` marks JSON's null and a table's shape with.
-- Uses only standard Lua 5.4.
--
-- The chunk takes nothing and returns `json.null` (a unique read-only sentinel) and the
-- metatables `json.array` and `json.object` give a table. They exist from the start, apart from
-- the `json` module (which loads when a script first touches it): values a service hands out
-- carry them (an empty array or object keeps its shape, a null in an array keeps its place), and
-- the module, when it loads, takes these very values.

local error, setmetatable = error, setmetatable

local null = setmetatable({}, {
  __tostring = function() return "json.null" end,
  __newindex = function() error("json.null is read-only", 2) end,
  __metatable = false,
})

return null, { __jsontype = "array" }, { __jsontype = "object" }

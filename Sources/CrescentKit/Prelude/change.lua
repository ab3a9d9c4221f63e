-- change.lua: the metamethods of a property's change tables.
-- Uses only standard Lua 5.4.
--
-- A change table holds `initial`, `coalesced` and `sub`; `object` and `key` come from the
-- prototype its property shares (its metatable's `__index`). These make `pairs` and `tostring`
-- (and so `inspect`) show all five. The chunk takes nothing and returns the metamethods.

local next, getmetatable, rawget, tostring, type, concat, sort = next, getmetatable, rawget, tostring, type, table.concat, table.sort

local function fields(change)
  local all = {}
  for k, v in next, change do all[k] = v end
  local shared = rawget(getmetatable(change), "__index")
  for k, v in next, shared do all[k] = v end
  return all
end

local metamethods = {}

function metamethods.__pairs(change) return next, fields(change), nil end

function metamethods.__tostring(change)
  local parts = {}
  for k, v in next, fields(change) do
    parts[#parts + 1] = k .. " = " .. (type(v) == "string" and ("%q"):format(v) or tostring(v))
  end
  sort(parts)
  return "change { " .. concat(parts, ", ") .. " }"
end

return metamethods

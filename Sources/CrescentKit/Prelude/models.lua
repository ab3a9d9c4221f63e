-- models.lua: methods of the data models services hand out, by type name.
-- Uses only standard Lua 5.4.
--
-- A data model is a read-only table of fields; a name that is not one of its fields is looked up
-- in its type's table here, so `response:json()` works while `pairs(response)` still lists only
-- the fields. The chunk takes the `json` module and returns { [typeName] = { name = function } }.

-- `json` may be its stand-in still (it loads on first use): `decode` is looked up when called.
local json = ...
local pcall, error, tostring, type = pcall, error, tostring, type

return {
  -- An http response { status, headers, body, url }.
  response = {
    -- response:json([opts]): the body decoded as json.decode decodes it (opts as json.decode's);
    -- a body that is not JSON raises an error at the caller, naming the place in the body.
    json = function(self, opts)
      if type(self) ~= "table" then error("response:json(): call it with ':', as response:json()", 2) end
      local ok, value = pcall(json.decode, self.body, opts)
      if ok then return value end
      error("response:json(): the body is not JSON: "
        .. (tostring(value):gsub("^json%.decode: ", ""):gsub("^invalid JSON: ", "")), 2)
    end,
  },
}

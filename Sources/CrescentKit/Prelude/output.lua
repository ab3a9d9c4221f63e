-- output.lua: `io.write` and `io.stdout:write` go through the host's console.
-- Uses only standard Lua 5.4.
--
-- The chunk takes `emit`, which writes one string to the console (the REPL's prints above its
-- prompt). Writes to other files keep Lua's own `write`; values are checked and numbers written
-- as Lua writes them.

local emit = ...
local stdout, output, type, format, pack, concat, mathtype = io.stdout, io.output, type, string.format, table.pack, table.concat, math.type
local methods = getmetatable(stdout).__index
local fileWrite = methods.write

local function write(file, ...)
  if file ~= stdout then return fileWrite(file, ...) end
  local parts = pack(...)
  for i = 1, parts.n do
    local v = parts[i]
    if mathtype(v) == "float" then
      parts[i] = format("%.14g", v)
    elseif type(v) ~= "string" and type(v) ~= "number" then
      error(("bad argument #%d to 'write' (string expected, got %s)"):format(i, type(v)), 3)
    end
  end
  emit(concat(parts, "", 1, parts.n))
  return file
end

methods.write = write
io.write = function(...) return write(output(), ...) end

-- output.lua: `io.write` and `io.stdout:write` go through the host's console, and
-- `io.stderr:write` too when the chunk is given `emitError`.
-- Uses only standard Lua 5.4.
--
-- The chunk takes `emit`, which writes one string to the console's stdout (the REPL's prints
-- above its prompt), and optionally `emitError`, the same for its stderr (a controller app on the
-- whole terminal holds both back, as it holds `print`'s output). Writes to other files keep Lua's
-- own `write`; values are checked and numbers written as Lua writes them.

local emit, emitError = ...
local stdout, stderr, output, type, format, pack, concat, mathtype = io.stdout, io.stderr, io.output, type, string.format, table.pack, table.concat, math.type
local methods = getmetatable(stdout).__index
local fileWrite = methods.write

local function write(file, ...)
  local target
  if file == stdout then target = emit
  elseif file == stderr and emitError then target = emitError
  else return fileWrite(file, ...) end
  local parts = pack(...)
  for i = 1, parts.n do
    local v = parts[i]
    if mathtype(v) == "float" then
      parts[i] = format("%.14g", v)
    elseif type(v) ~= "string" and type(v) ~= "number" then
      error(("bad argument #%d to 'write' (string expected, got %s)"):format(i, type(v)), 3)
    end
  end
  target(concat(parts, "", 1, parts.n))
  return file
end

methods.write = write
io.write = function(...) return write(output(), ...) end

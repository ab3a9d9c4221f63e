-- guard.lua: keeps an interrupt (Ctrl-C, --timeout, app.exit) from being swallowed.
--
-- The host's interrupt is raised as an ordinary error inside Lua code, so a script that calls
-- pcall in a loop could catch it forever. These wrappers re-raise any error caught while an
-- interrupt is pending; otherwise they behave exactly like the originals. Uses only standard Lua
-- 5.4 plus the host's `interrupted` function, passed as the chunk's argument.
local interrupted = ...
local raw_pcall, raw_xpcall, raw_resume, raw_close = pcall, xpcall, coroutine.resume, coroutine.close
local error = error

local function pass(ok, ...)
  if not ok and interrupted() then error((...), 0) end
  return ok, ...
end

function pcall(f, ...) return pass(raw_pcall(f, ...)) end
function xpcall(f, handler, ...) return pass(raw_xpcall(f, handler, ...)) end
function coroutine.resume(co, ...) return pass(raw_resume(co, ...)) end
function coroutine.close(co) return pass(raw_close(co)) end

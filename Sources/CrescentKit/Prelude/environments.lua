-- environments.lua: busted's per-block environments, for `crescent test` (DESIGN.md "Testing
-- scripts"). The chunk takes nothing; it returns the table that testing.lua drives.
--
-- Under busted a global a spec's code assigns (`X = 1`, `function X() end`) lands in the
-- environment of what is running it: the file's top level, a describe block's body, a test's
-- body. It is seen there and in what runs inside (the block's hooks, tests and nested blocks),
-- not by sibling blocks or the rest of the file; a read walks from the running block up to the
-- file and then to the real globals. A hook writes into its block's environment; an expose
-- block into the one of the block around its own block (at a file's top level: the suite's,
-- which the files after it read). `_G.X = 1` and `rawset(_G, ...)` reach the real globals.
--
-- A spec file's chunk runs with `spec` as its _ENV, a table kept empty, so that every global it
-- reads or writes goes through its metatable: the running context's (enter). A context's
-- environment reads through to its parent's by `__index` tables, which Lua follows without a
-- call: `it` and `describe`, read once per test declared, cost no more than
-- a few table lookups.

local setmetatable = setmetatable

local environments = {}

-- The spec files' _ENV.
local spec = {}
environments.spec = spec

-- busted's lookup (the context's value `or` its parent's `or` the global) passes over a false
-- value, so a global set to false in a context reads as though it were not set there: it is
-- dropped here, which reads the same.
local function writer(target)
  return function(_, key, value)
    if value == false then value = nil end
    target[key] = value
  end
end

-- A context whose environment reads through to `parent`'s (the real globals for none); an
-- expose block's writes the names it does not hold into `exposesTo`'s, as busted's do.
function environments.new(parent, exposesTo)
  local env = setmetatable({}, { __index = parent and parent.env or _G, __newindex = exposesTo and exposesTo.env or nil })
  return { env = env, meta = { __index = env, __newindex = writer(env) } }
end

-- What the top levels of the files run in one host share: what expose blocks at a file's top
-- level set (the files after it read it; busted's suite).
environments.suite = environments.new(nil)

-- Makes `context` the running one: the spec's code reads and writes its globals there.
function environments.enter(context)
  setmetatable(spec, context.meta)
end

return environments

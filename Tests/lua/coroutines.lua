-- coroutine.resume and coroutine.wrap behave as under lua5.4 (the host marks the running
-- coroutine for interrupts, nothing else).
local function pack(...) return { n = select("#", ...), ... } end

local co = coroutine.create(function(a, b)
  local c = coroutine.yield(a + b)
  error("boom " .. c)
end)
local r = pack(coroutine.resume(co, 1, 2))
assert(r.n == 2 and r[1] == true and r[2] == 3)
r = pack(coroutine.resume(co, "x"))
assert(r[1] == false and r[2]:match("coroutines.lua:%d+: boom x$"), r[2])
assert(coroutine.status(co) == "dead")
r = pack(coroutine.resume(co))
assert(r[1] == false and r[2] == "cannot resume dead coroutine")

local f = coroutine.wrap(function(x)
  local y = coroutine.yield(x * 2)
  return y + 1, "end"
end)
assert(f(5) == 10)
r = pack(f(10))
assert(r.n == 2 and r[1] == 11 and r[2] == "end")
local ok, err = pcall(f)
assert(not ok and err:match("cannot resume dead coroutine$"), err)

local g = coroutine.wrap(function() error("inner") end)
ok, err = pcall(g)
assert(not ok and err:match("coroutines.lua:%d+: inner$"), err)
local h = coroutine.wrap(function() error({ code = 7 }) end)
ok, err = pcall(h)
assert(not ok and type(err) == "table" and err.code == 7, "a table error passes through untouched")

ok, err = pcall(coroutine.resume, 1)
assert(not ok and err == "bad argument #1 to 'resume' (thread expected, got number)"
  or err == "bad argument #1 to 'coroutine.resume' (thread expected, got number)", err)
ok, err = pcall(coroutine.wrap, 1)
assert(not ok and err:match("function expected, got number"), err)

-- resuming itself, and a running coroutine from inside
local self_co
self_co = coroutine.create(function() return coroutine.resume(self_co) end)
r = pack(coroutine.resume(self_co))
assert(r[1] == true and r[2] == false and r[3] == "cannot resume non-suspended coroutine")

-- to-be-closed variables of a wrapped coroutine that fails are closed
local closed = false
local k = coroutine.wrap(function()
  local _ <close> = setmetatable({}, { __close = function() closed = true end })
  error("fails")
end)
pcall(k)
assert(closed, "the dead coroutine's variables were closed")
print("ok coroutines")

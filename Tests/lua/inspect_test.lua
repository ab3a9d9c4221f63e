-- Tests for the `inspect` global (Sources/CrescentKit/Prelude/inspect.lua).
-- Without the host:
--   lua5.4 -e 'inspect=dofile("Sources/CrescentKit/Prelude/inspect.lua")' Tests/lua/inspect_test.lua
-- Prints `ok inspect_test` on success; raises on the first failure.

local inspect = assert(inspect, "the global inspect is missing")

local function eq(got, want, what)
  if got ~= want then
    error(string.format("%s\n  got:  %s\n  want: %s", what or "mismatch", tostring(got), tostring(want)), 2)
  end
end

local function checkerr(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  err = tostring(err)
  assert(err:find(pattern), "error '" .. err .. "' does not match '" .. pattern .. "'")
end

local function lines(...) return table.concat({ ... }, "\n") end
local function readback(s) return assert(load("return " .. s, "=readback", "t", { math = math }))() end

-- Atoms ------------------------------------------------------------------------------------------
eq(inspect(nil), "nil")
eq(inspect(true), "true")
eq(inspect(false), "false")
eq(inspect(3), "3")
eq(inspect(3.0), "3.0")
eq(inspect(-0.0), "-0.0")
eq(inspect(0.1), "0.1")
eq(inspect(0.1 + 0.2), "0.30000000000000004")
eq(inspect(1e100), "1e+100")
eq(inspect(2.0 ^ 53), "9007199254740992.0")
eq(inspect(math.mininteger), "math.mininteger")
eq(load("return " .. inspect(math.mininteger))(), math.mininteger)
eq(inspect(math.mininteger + 1), "-9223372036854775807")
eq(inspect(math.maxinteger), "9223372036854775807")
eq(inspect(math.huge), "math.huge")
eq(inspect(-math.huge), "-math.huge")
assert(inspect(0 / 0) == "0/0")
assert(inspect(-(0 / 0)) == "0/0")
-- Written as Lua reads it back (as %q writes (0/0)); a NaN's sign has no meaning a script can use.
local nan = load("return " .. inspect(0 / 0))()
assert(nan ~= nan, "NaN reads back as NaN")
for _, x in ipairs({ 3, 3.0, -0.0, 0.1, 1 / 3, 2.0 ^ 63, 5e-324, 1.7976931348623157e308, -2.5e-8,
  math.maxinteger, math.huge, -math.huge, 123456789012345678 }) do
  local back = readback(inspect(x))
  assert(back == x and math.type(back) == math.type(x), "number reads back: " .. inspect(x))
end

-- Strings ----------------------------------------------------------------------------------------
eq(inspect("hi"), '"hi"')
eq(inspect('a\nb\tc\r"q"\\'), [["a\nb\tc\r\"q\"\\"]])
eq(inspect("\0" .. "1"), [["\0001"]], "escapes always have 3 digits")
eq(inspect("\1\27\127"), [["\001\027\127"]])
eq(inspect("é✓😀"), '"é✓😀"', "valid UTF-8 is printed as is")
eq(inspect("a\255b\195"), [["a\255b\195"]], "invalid UTF-8 bytes are escaped")
eq(inspect("\xED\xA0\x80"), [["\237\160\128"]], "an encoded surrogate is not valid UTF-8")
eq(inspect("é\xE9"), [["é\233"]])
eq(inspect(("x"):rep(20), { string = 5 }), '"xxxxx"...(15 bytes more)')
eq(inspect(("é"):rep(3), { string = 3 }), '"é"...(4 bytes more)', "truncation keeps characters whole")
eq(inspect("abc", { string = 0 }), '""...(3 bytes more)')
do
  local all = {}
  for b = 0, 255 do all[#all + 1] = string.char(b) end
  local tricky = { table.concat(all), "\0\0\0", "x\0y", "\0009", "é\255😀\n", "[[]]", "--" }
  for _, s in ipairs(tricky) do eq(readback(inspect(s)), s, "string reads back") end
end

-- Tables: layout ---------------------------------------------------------------------------------
eq(inspect({}), "{}")
eq(inspect({ 1, 2, x = 3 }), "{ 1, 2, x = 3 }")
eq(inspect({ 1, nil, 3 }), "{ 1, [3] = 3 }", "the array part stops at the first hole")
eq(inspect({ { 1 }, { a = {} } }), "{ { 1 }, { a = {} } }")
eq(inspect({ 1, 2, [-1] = "n", [2.5] = "f", [10] = "t", ["a b"] = 1, ["end"] = 2, A = 3, _x = 4,
  z = 5, [false] = 6, [true] = 7, [print] = 8 }, { width = 1000 }),
  '{ 1, 2, [-1] = "n", [2.5] = "f", [10] = "t", A = 3, _x = 4, ["a b"] = 1, ["end"] = 2, z = 5, '
  .. "[false] = 6, [true] = 7, [<function: builtin>] = 8 }",
  "array first, then numbers, strings (keywords bracketed), other types by type name")
eq(inspect({ [{ 1 }] = true }), "{ [{ 1 }] = true }", "table keys are rendered too")
eq(inspect({ name = "a fairly long string value", other = "another fairly long value here" }),
  lines("{", '  name = "a fairly long string value",', '  other = "another fairly long value here"', "}"))
eq(inspect({ list = { "alpha", "beta", "gamma" }, nested = { deeper = { key = "a long value, long enough" } } }),
  lines("{", '  list = { "alpha", "beta", "gamma" },',
    '  nested = { deeper = { key = "a long value, long enough" } }', "}"))
eq(inspect({ ("a"):rep(40), ("b"):rep(40) }, { indent = 4 }),
  lines("{", '    "' .. ("a"):rep(40) .. '",', '    "' .. ("b"):rep(40) .. '"', "}"))
eq(inspect({ ("a"):rep(40), { ("b"):rep(70), 1 } }, { indent = "\t" }),
  lines("{", '\t"' .. ("a"):rep(40) .. '",', "\t{", '\t\t"' .. ("b"):rep(70) .. '",', "\t\t1", "\t}", "}"))
eq(inspect({ a = { b = 1 }, c = 2 }, { width = 0, newline = " ", indent = "" }), "{ a = { b = 1 }, c = 2 }")
eq(inspect({ 1, 2, 3 }, { width = 10 }), lines("{", "  1, 2, 3", "}"), "short atoms are packed")
do
  local t = {}
  for i = 1, 30 do t[i] = i end
  eq(inspect(t), lines("{",
    "  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,",
    "  21, 22, 23, 24, 25, 26, 27, 28, 29, 30", "}"))
  for line in inspect(t):gmatch("[^\n]+") do assert(#line <= 73, "line too long: " .. line) end
end

-- Limits -----------------------------------------------------------------------------------------
local nest = { a = { b = { c = { d = { e = {} } } } } }
eq(inspect(nest), "{ a = { b = { c = { d = {...} } } } }", "default depth is 4")
eq(inspect(nest, { depth = 1 }), "{ a = {...} }")
eq(inspect(nest, { depth = 0 }), "{...}")
eq(inspect({}, { depth = 0 }), "{}", "an empty table hides nothing")
eq(inspect(nest, { depth = math.huge }), "{ a = { b = { c = { d = { e = {} } } } } }")
eq(inspect({ 1, 2, 3, 4, 5 }, { length = 2 }), "{ 1, 2, ... (3 more) }")
eq(inspect({ 1, 2, x = 1, y = 2 }, { length = 3 }), "{ 1, 2, x = 1, ... (1 more) }")
eq(inspect({ 1, 2 }, { length = 0 }), "{ ... (2 more) }")
do
  local big = {}
  for i = 1, 100000 do big["k" .. i] = i end
  local s = inspect(big)
  assert(s:find("k1 = 1,", 1, true) and s:find("... (99900 more)", 1, true), "huge tables are cut")
  big = {}
  for i = 1, 150 do big[i] = i end
  local s2 = inspect(big)
  local tail = " 99, 100,\n  ... (50 more)\n}"
  eq(s2:sub(-#tail), tail, "default length is 100")
end

-- Cycles and shared tables -----------------------------------------------------------------------
do
  local t = {}
  t.self = t
  eq(inspect(t), "{ self = <cycle> }")
  local a, b = {}, {}
  a.b, b.a = b, a
  eq(inspect(a), "{ b = { a = <cycle> } }")
  local s = { 1 }
  eq(inspect({ s, s }), "{ <1>{ 1 }, <table 1> }", "a shared table is shown once, then referenced")
  eq(inspect({ x = s, y = { s }, z = s }), "{ x = <1>{ 1 }, y = { <table 1> }, z = <table 1> }")
  local p = setmetatable({}, { __name = "Point" })
  eq(inspect({ p, p }), "{ <1><Point>{}, <Point 1> }")
  local r = { s, s }
  r.r = r
  eq(inspect({ r, r }), "{ <1>{ <2>{ 1 }, <table 2>, r = <cycle> }, <table 1> }")
  eq(inspect({ { s }, s }, { depth = 2 }), "{ { {...} }, { 1 } }", "tables beyond the depth get no id")
  local key = {}
  eq(inspect({ [key] = key }), "{ [<1>{}] = <table 1> }")
  -- a shared table inside a one-line attempt that fails must not leave a dangling id
  local long = { ("x"):rep(60) }
  eq(inspect({ { s, long }, s }), lines("{", "  {", "    <1>{ 1 },", '    { "' .. ("x"):rep(60) .. '" }',
    "  },", "  <table 1>", "}"))
end

-- Metatables -------------------------------------------------------------------------------------
eq(inspect(setmetatable({}, { __tostring = function() return "P(1, 2)" end })), "P(1, 2)")
eq(inspect({ p = setmetatable({}, { __tostring = function() return "P" end }) }), "{ p = P }")
eq(inspect(setmetatable({}, { __tostring = function() error("boom") end })), "<table: error in __tostring>")
eq(inspect(setmetatable({}, { __tostring = function() error("boom") end, __name = "Point" })),
  "<Point: error in __tostring>")
eq(inspect(setmetatable({}, { __tostring = function() return {} end })), "<table: error in __tostring>")
eq(inspect(setmetatable({ x = 1 }, { __name = "Point" })), "<Point>{ x = 1 }")
eq(inspect(setmetatable({ x = 1 }, { __name = "Point", __metatable = "locked" })), "<Point>{ x = 1 }",
  "a locked metatable still shows __name")
eq(inspect(setmetatable({ x = 1 }, { __tostring = function() return "L" end, __metatable = false })), "L")
eq(inspect(setmetatable({ x = 1 }, { __metatable = setmetatable({}, { __index = function() error("no") end }) })),
  "{ x = 1 }")
eq(inspect(setmetatable({ x = 1 }, { __name = "Deep" }), { depth = 0 }), "<Deep>{...}")
do
  local hostile = setmetatable({ 1, 2, k = "v" }, {
    __index = function() error("index") end, __newindex = function() error("newindex") end,
    __pairs = function() error("pairs") end, __len = function() error("len") end,
    __eq = function() error("eq") end, __lt = function() error("lt") end,
    __le = function() error("le") end, __concat = function() error("concat") end,
  })
  eq(inspect(hostile), '{ 1, 2, k = "v" }', "metamethods are never triggered")
  eq(inspect({ [hostile] = hostile }), '{ [<1>{ 1, 2, k = "v" }] = <table 1> }')
  local errobj = setmetatable({}, { __tostring = function() error("nested") end })
  eq(inspect(setmetatable({}, { __tostring = function() error(errobj) end })), "<table: error in __tostring>")
  local yielding = setmetatable({}, { __tostring = function() coroutine.yield() end })
  local co = coroutine.wrap(function() return inspect(yielding) end)
  eq(co(), "<table: error in __tostring>")
end
assert(inspect(io.stdout):find("^file %("), "userdata with __tostring uses it")
eq(inspect(setmetatable({}, { __tostring = function() return ("y"):rep(20) end }), { string = 4 }),
  "yyyy...(16 bytes more)")

-- Functions, threads -----------------------------------------------------------------------------
local function here() end
local src = debug.getinfo(1, "S").short_src
eq(inspect(here), "<function: " .. src .. ":" .. debug.getinfo(here, "S").linedefined .. ">")
eq(inspect(print), "<function: builtin>")
eq(inspect(coroutine.create(print)), "<thread>")
eq(inspect({ f = print, co = coroutine.create(print) }), "{ co = <thread>, f = <function: builtin> }")

-- Hostile inputs never raise ---------------------------------------------------------------------
do
  local deep = {}
  local cur = deep
  for _ = 1, 100000 do cur.next = {}; cur = cur.next end
  eq(inspect(deep), "{ next = { next = { next = { next = {...} } } } }")
  local s = inspect(deep, { depth = math.huge })
  assert(type(s) == "string" and s:find("{...}", 1, true), "nesting is capped")
  local arr = {}
  cur = arr
  for _ = 1, 100000 do cur[1] = {}; cur = cur[1] end
  assert(type(inspect(arr, { depth = math.huge, width = 0 })) == "string")
  local mixed = { [1.5] = 1, [-3] = 2, x = 3, [true] = 4, [false] = 5, [{}] = 6, [print] = 7,
    [coroutine.create(print)] = 8, [io.stdout] = 9, [math.huge] = 10, [math.mininteger] = 11 }
  assert(type(inspect(mixed)) == "string")
end

-- Options and defaults ---------------------------------------------------------------------------
checkerr("inspect: opts must be a table, got number", inspect, 1, 5)
checkerr("opts%.depth must be a number >= 0, got %-1", inspect, 1, { depth = -1 })
checkerr("opts%.length must be a number >= 0, got string", inspect, 1, { length = "x" })
checkerr("opts%.indent must be", inspect, 1, { indent = true })
checkerr("opts%.newline must be a string", inspect, 1, { newline = 1 })
checkerr("^" .. src:gsub("%p", "%%%0") .. ":%d+: inspect: opts", function() inspect(1, { depth = "x" }) end)
do
  local saved = inspect.defaults.depth
  inspect.defaults.depth = 1
  eq(inspect(nest), "{ a = {...} }", "inspect.defaults can be changed")
  inspect.defaults.depth = saved
end

print("ok inspect_test")

-- Tests for the `json` global (Sources/CrescentKit/Prelude/json.lua).
-- Without the host:
--   lua5.4 -e 'json=dofile("Sources/CrescentKit/Prelude/json.lua")' Tests/lua/json_test.lua
-- Prints `ok json_test` on success; raises on the first failure.

local json = assert(json, "the global json is missing")
local null, encode, decode = json.null, json.encode, json.decode

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

local function shape(t) local mt = getmetatable(t); return mt and mt.__jsontype end

-- Deep equality that also compares number subtypes, the sign of zero and array/object marks.
local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) == "number" then
    return math.type(a) == math.type(b) and a == b and (a ~= 0 or 1 / a == 1 / b)
  end
  if type(a) ~= "table" or a == null or b == null then return rawequal(a, b) end
  if shape(a) ~= shape(b) and shape(a) and shape(b) then return false end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local function roundtrip(v, what)
  local s = encode(v)
  local back = decode(s)
  assert(same(back, v), (what or "round trip") .. ": " .. s)
  eq(encode(back), s, (what or "round trip") .. " encodes the same again")
  eq(encode(decode(encode(v, { indent = 2 }))), s, (what or "round trip") .. " (pretty)")
end

-- Encoding atoms ---------------------------------------------------------------------------------
eq(encode(nil), "null")
eq(encode(null), "null")
eq(encode(true), "true")
eq(encode(false), "false")
eq(encode(3), "3")
eq(encode(-42), "-42")
eq(encode(3.0), "3.0", "floats keep a fraction so they decode as floats")
eq(encode(-0.0), "-0.0")
eq(encode(0.1), "0.1")
eq(encode(0.1 + 0.2), "0.30000000000000004")
eq(encode(1e300), "1e+300")
eq(encode(2.0 ^ 53), "9007199254740992.0")
eq(encode(math.mininteger), "-9223372036854775808")
eq(encode(math.maxinteger), "9223372036854775807")
eq(encode("plain"), '"plain"')
eq(encode('q"b\\s/\b\f\n\r\t'), [["q\"b\\s/\b\f\n\r\t"]])
eq(encode("\0\1\31\127"), '"\\u0000\\u0001\\u001f\127"')
eq(encode("é✓😀"), '"é✓😀"', "UTF-8 is written as is")
eq(tostring(null), "json.null")
checkerr("read%-only", function() null.x = 1 end)

-- Encoding tables --------------------------------------------------------------------------------
eq(encode({}), "{}", "an unmarked empty table is an object")
eq(encode(json.array()), "[]")
eq(encode(json.array({})), "[]")
eq(encode(json.object()), "{}")
eq(encode({ 1, 2, 3 }), "[1,2,3]")
eq(encode({ 1, null, 3 }), "[1,null,3]")
eq(encode({ b = 1, a = 2, c = { z = 1, y = 2 } }), '{"a":2,"b":1,"c":{"y":2,"z":1}}', "keys sorted")
eq(encode({ ["a b"] = 1, ["\n"] = 2 }), '{"\\n":2,"a b":1}')
eq(encode(json.array({ 1, 2 })), "[1,2]")
eq(encode(json.object({ x = json.array() })), '{"x":[]}')
do
  local t = {}
  for i = 1, 50 do t["k" .. i] = i end
  assert(same(decode(encode(t, { sort_keys = false })), t), "sort_keys = false still encodes every key")
end
eq(encode({ a = { 1, 2 }, b = {}, c = json.array(), d = { x = "y" } }, { indent = 2 }), [[
{
  "a": [
    1,
    2
  ],
  "b": {},
  "c": [],
  "d": {
    "x": "y"
  }
}]])
eq(encode({ 1, { 2 } }, { indent = "\t" }), "[\n\t1,\n\t[\n\t\t2\n\t]\n]")
eq(encode({ 1 }, { indent = 0 }), "[1]")
do -- __tojson lets a value choose its JSON form; __index and __pairs are ignored
  local Point = { __tojson = function(p) return { x = p[1], y = p[2] } end }
  eq(encode({ at = setmetatable({ 1, 2 }, Point) }), '{"at":{"x":1,"y":2}}')
  local selfish = setmetatable({ 1 }, { __tojson = function(t) return t end })
  eq(encode(selfish), "[1]")
  local proxy = setmetatable({ a = 1 }, { __index = function() error("index") end,
    __pairs = function() error("pairs") end })
  eq(encode(proxy), '{"a":1}')
  local hidden = { b = 2 }
  local sealed = setmetatable({}, { __metatable = "sealed", __pairs = function() return next, hidden, nil end })
  eq(encode(sealed), '{"b":2}', "a protected metatable encodes as what pairs shows")
  eq(encode(setmetatable({ a = 1 }, { __jsontype = "object" })), '{"a":1}')
  eq(encode(setmetatable({}, { __jsontype = "array" })), "[]", "any metatable may declare __jsontype")
  local shared = { 1 }
  eq(encode({ shared, shared }), "[[1],[1]]", "a table used twice (not a cycle) is fine")
end

-- Markers ----------------------------------------------------------------------------------------
do
  local t = {}
  assert(json.array(t) == t and shape(t) == "array")
  assert(json.object(t) == t and shape(t) == "object", "a marked table can be re-marked")
  checkerr("json%.array: expected a table, got number", json.array, 5)
  checkerr("json%.object: the table already has a metatable %(set __jsontype = \"object\" in it instead%)",
    json.object, setmetatable({}, {}))
end

-- Encoding errors --------------------------------------------------------------------------------
local here = debug.getinfo(1, "S").short_src:gsub("%p", "%%%0")
checkerr("^" .. here .. ":%d+: json%.encode: cannot encode a function at value%.items%[3%]",
  function() encode({ items = { 1, 2, print } }) end)
checkerr("json%.encode: cannot encode a userdata at value", encode, io.stdout)
checkerr("json%.encode: cannot encode a thread at value%[1%]", encode, { coroutine.create(print) })
checkerr("^" .. here .. ":%d+: json%.encode: NaN at value%.x %(JSON has no NaN",
  function() encode({ x = 0 / 0 }) end)
checkerr("json%.encode: infinity at value%.x %(JSON has no infinity", encode, { x = math.huge })
checkerr("json%.encode: %-infinity at value%[1%]", encode, { -math.huge })
do
  local c = { a = { b = {} } }
  c.a.b.back = c.a
  checkerr("json%.encode: cycle at value%.a%.b%.back %(it is the table at value%.a again", encode, c)
  local s = {}
  s[1] = s
  checkerr("json%.encode: cycle at value%[1%]", encode, s)
end
checkerr("json%.encode: mixed keys at value %(table has both array items and string keys",
  encode, { 1, 2, x = 3 })
checkerr("json%.encode: mixed keys at value%.list", encode, { list = json.array({ 1, y = 2 }) })
checkerr("json%.encode: key of type boolean at value %(object keys must be strings%)", encode, { [true] = 1 })
checkerr("json%.encode: key of type table at value%.m", encode, { m = { [{}] = 1 } })
checkerr("json%.encode: key 1%.5 at value", encode, { [1.5] = 1 })
checkerr("json%.encode: key 0 at value", encode, { [0] = 1 })
checkerr("json%.encode: key of type number at value %(object keys must be strings; convert them",
  encode, json.object({ 1 }))
checkerr("json%.encode: sparse array at value %(keys 1%.%.3 but only 2 items; fill the holes with json%.null%)",
  encode, { 1, nil, 3 })
checkerr("json%.encode: invalid UTF%-8 at value%.s %(byte 2%)", encode, { s = "a\255" })
checkerr("json%.encode: invalid UTF%-8 in a key at value", encode, { ["\192\128"] = 1 })
checkerr('json%.encode: NaN at value%["a b"%]%[2%]', encode, { ["a b"] = { 1, 0 / 0 } })
checkerr("json%.encode: opts must be a table", encode, 1, 2)
checkerr("json%.encode: opts%.indent must be", encode, 1, { indent = true })
checkerr("json%.encode: mixed keys", encode, { 1, [3] = 3, x = 1 })
checkerr("boom", encode, setmetatable({}, { __tojson = function() error("boom") end }))
do
  local deep = {}
  local cur = deep
  for _ = 1, 100000 do cur[1] = {}; cur = cur[1] end
  checkerr("json%.encode: nesting deeper than 1000 levels at value%[1%]", encode, deep)
end

-- Decoding ---------------------------------------------------------------------------------------
eq(decode("true"), true)
eq(decode(" false "), false)
eq(decode("null"), null)
eq(decode("3"), 3)
eq(math.type(decode("3")), "integer")
eq(math.type(decode("-0")), "integer")
for _, s in ipairs({ "3.0", "3e2", "3E+2", "-0.5", "1e-2", "0.0" }) do
  eq(math.type(decode(s)), "float", s .. " is a float")
end
eq(decode("3e2"), 300.0)
eq(decode("-0.5"), -0.5)
assert(1 / decode("-0.0") < 0, "-0.0 keeps its sign")
eq(decode("9223372036854775807"), math.maxinteger)
eq(decode("-9223372036854775808"), math.mininteger)
eq(math.type(decode("-9223372036854775808")), "integer")
eq(math.type(decode("9223372036854775808")), "float", "beyond 64 bits: float")
eq(decode("123456789012345678901234567890"), 1.2345678901234568e29)
eq(decode('"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t"'), 'a"b\\c/d\b\f\n\r\t')
eq(decode('"\\u0041\\u00e9\\u20AC\\ud83d\\ude00"'), "Aé€😀")
eq(decode('"x\\u0000y"'), "x\0y")
eq(decode('"é✓"'), "é✓")
do
  local v = decode(" \t\r\n [ \t\r\n 1 \t\r\n , \n 2 ] \n")
  assert(#v == 2 and v[1] == 1 and v[2] == 2, "the four JSON whitespace characters are skipped")
  checkerr("unexpected character U%+000B", decode, "\v1")
end
eq(decode("\239\187\191[1]")[1], 1, "a leading byte order mark is skipped")
do
  local v = decode('{"a": [1, {"b": null}], "e": [], "o": {}, "n": null}')
  eq(shape(v), "object")
  eq(shape(v.a), "array")
  eq(v.a[2].b, null)
  eq(v.n, null, "null object values keep their key")
  eq(shape(v.e), "array")
  eq(shape(v.o), "object")
  eq(encode(v), '{"a":[1,{"b":null}],"e":[],"n":null,"o":{}}', "empty array and object round-trip")
  local arr = decode("[null, null]")
  eq(#arr, 2)
  eq(decode('{"k":1,"k":2}').k, 2, "the last duplicate key wins")
end
do
  local deep = string.rep("[", 999) .. string.rep("]", 999)
  eq(encode(decode(deep)), deep, "999 levels are fine")
  eq(decode("[[1]]", { max_depth = 2 })[1][1], 1)
  checkerr("nesting deeper than 2 levels", decode, "[[[1]]]", { max_depth = 2 })
end

-- Decoding errors --------------------------------------------------------------------------------
checkerr("^" .. here .. ":%d+: json%.decode: unexpected character 'x' at line 1, column 5",
  function() decode("[1, x]") end)
local decode_errors = {
  { "", "unexpected end of input at line 1, column 1 %(expected a value%)" },
  { "   ", "unexpected end of input at line 1, column 4" },
  { "[1,", "unexpected end of input at line 1, column 4" },
  { '{"a":1', "unexpected end of input at line 1, column 7 %(expected ',' or '}'%)" },
  { "[1,]", "unexpected character ']' at line 1, column 4 %(expected a value%)" },
  { '{"a":1,}', "unexpected character '}' at line 1, column 8 %(expected a string key%)" },
  { "{a:1}", "unexpected character 'a' at line 1, column 2 %(expected a string key%)" },
  { '{"a" 1}', "unexpected character '1' at line 1, column 6 %(expected ':'%)" },
  { "[1 2]", "unexpected character '2' at line 1, column 4 %(expected ',' or ']'%)" },
  { "[1]x", "trailing characters after the JSON value at line 1, column 4" },
  { "1 2", "trailing characters" },
  { "01", "leading zero in a number at line 1, column 1" },
  { "-01", "leading zero" },
  { "-", "unexpected end of input at line 1, column 2 %(expected a digit%)" },
  { "-a", "unexpected character 'a' at line 1, column 2" },
  { "1.", "expected a digit after '%.'" },
  { "1.e3", "unexpected character 'e' at line 1, column 3" },
  { ".5", "unexpected character '%.' at line 1, column 1" },
  { "+1", "unexpected character '%+'" },
  { "1e", "expected a digit in the exponent" },
  { "1e+", "unexpected end of input at line 1, column 4 %(expected a digit in the exponent%)" },
  { "0x10", "trailing characters" },
  { "NaN", "unexpected character 'N'" },
  { "Infinity", "unexpected character 'I'" },
  { "tru", "unexpected end of input at line 1, column 4 %(expected 'true'%)" },
  { "trUe", "unexpected character 'U' at line 1, column 3" },
  { "nul", "expected 'null'" },
  { "'a'", "unexpected character '''" },
  { '"abc', "unexpected end of input in a string" },
  { '"a\tb"', "unescaped control character U%+0009 in a string at line 1, column 3" },
  { '"a\0b"', "unescaped control character U%+0000" },
  { '"\\x"', "unexpected character 'x' at line 1, column 3 %(expected an escape" },
  { '"\\u12g4"', "unexpected character 'g' at line 1, column 6 %(expected 4 hex digits" },
  { '"\\u12"', "expected 4 hex digits" },
  { '"\\ud800"', "lone surrogate \\uD800 in a string at line 1, column 2" },
  { '"\\udc00"', "lone surrogate \\uDC00" },
  { '"\\ud800\\u0041"', "invalid low surrogate \\u0041" },
  { '"\255"', "invalid UTF%-8 at line 1, column 2" },
  { '"\237\160\128"', "invalid UTF%-8" },
  { "[é]", "unexpected character 'é' %(U%+00E9%) at line 1, column 2" },
  { "[1,\n 2,\n\n  x]", "unexpected character 'x' at line 4, column 3" },
  { '["é", x]', "unexpected character 'x' at line 1, column 7", "columns count characters" },
  { "[\r\n1", "unexpected end of input at line 2, column 2" },
  { "\239\187\191", "unexpected end of input" },
  { string.rep("[", 1001) .. string.rep("]", 1001), "nesting deeper than 1000 levels at line 1, column 1001" },
  { string.rep('{"a":', 100000), "nesting deeper than 1000 levels" },
  -- Too large for a double, as the config reader and JSON-RPC refuse it (not inf).
  { "1e400", "the number 1e400 is out of range at line 1, column 1" },
  { "[1, -1e400]", "the number %-1e400 is out of range at line 1, column 5" },
  { "1" .. string.rep("0", 400), "is out of range" },
}
for _, case in ipairs(decode_errors) do
  checkerr("^json%.decode: ", decode, case[1])
  checkerr(case[2], decode, case[1])
end
checkerr("json%.decode: expected a string, got nil", decode)
checkerr("json%.decode: expected a string, got table", decode, {})
checkerr("json%.decode: opts%.maxDepth must be", decode, "1", { max_depth = 0 })
checkerr("json%.decode: opts%.maxDepth must be", decode, "1", { maxDepth = 0 })
-- One spelling rule: camelCase, the snake_case of earlier releases still read; unknown keys named.
eq(decode("[[1]]", { maxDepth = 2 })[1][1], 1)
checkerr("nesting deeper than 2 levels", decode, "[[[1]]]", { maxDepth = 2 })
eq(encode({ b = 1, a = 2 }, { sortKeys = true }), '{"a":2,"b":1}')
checkerr("json%.encode: unknown option 'sortkeys' %(options: indent, sortKeys%)", encode, {}, { sortkeys = false })
checkerr("json%.decode: unknown option 'depth' %(options: maxDepth%)", decode, "1", { depth = 3 })

-- Round trips ------------------------------------------------------------------------------------
roundtrip(math.mininteger, "mininteger")
roundtrip(math.maxinteger, "maxinteger")
roundtrip(0)
roundtrip(-0.0)
for _, x in ipairs({ 0.1, 1 / 3, -2.5e-8, 2.0 ^ 53, 2.0 ^ 63, 5e-324, 1.7976931348623157e308, 1e21, 1.0,
  123456.789, -1e-300 }) do
  roundtrip(x, "float " .. string.format("%.17g", x))
end
roundtrip("a\0b\0", "embedded zeros")
roundtrip("\0")
roundtrip("")
do
  local all = {}
  for b = 0, 127 do all[#all + 1] = string.char(b) end
  roundtrip(table.concat(all) .. "é€😀\u{10FFFF}", "every ASCII byte and some UTF-8")
end
roundtrip(json.array(), "empty array")
roundtrip(json.object(), "empty object")
roundtrip({ json.array(), json.object(), { json.array({ json.object() }) } })
roundtrip({
  name = "Crescent", version = 1, ratio = 0.75, tags = { "lua", "swift" }, nested = { a = { b = { c = null } } },
  list = { 1, 2.5, "three", true, false, null, { x = 1 } }, empty = {}, ints = { math.mininteger, -1, 0, 1 },
}, "nested structure")
do -- a bigger document, encoded and decoded both ways
  local items = {}
  for i = 1, 2000 do
    items[i] = { id = i, name = "item " .. i .. " \"é\"\n", price = i * 0.25, tags = { "a", "b" }, ok = i % 2 == 0 }
  end
  roundtrip(items, "2000 objects")
end

print("ok json_test")

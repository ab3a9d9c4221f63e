-- Tests for the `json` global (Sources/CrescentKit/Prelude/json.lua over Model's codec), run
-- through crescent (LuaScriptTests). Prints `ok json_test` on success; raises on the first failure.

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
eq(encode({}), "[]", "an unmarked empty table is an array, as everywhere in Crescent")
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
  "b": [],
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
checkerr("^" .. here .. ":%d+: json%.encode: value%.items%[3%] is a function: JSON values hold only strings, numbers, booleans and tables",
  function() encode({ items = { 1, 2, print } }) end)
checkerr("json%.encode: value is a FILE%*", encode, io.stdout)
checkerr("json%.encode: value%[1%] is a thread", encode, { coroutine.create(print) })
checkerr("^" .. here .. ":%d+: json%.encode: value%.x is NaN: JSON has no NaN or infinity; give null, a string or a finite number instead",
  function() encode({ x = 0 / 0 }) end)
checkerr("json%.encode: value%.x is inf: JSON has no NaN or infinity", encode, { x = math.huge })
checkerr("json%.encode: value%[1%] is %-inf", encode, { -math.huge })
checkerr("json%.encode: value is NaN", encode, 0 / 0)
do
  local c = { a = { b = {} } }
  c.a.b.back = c.a
  checkerr("json%.encode: value%.a%.b%.back is a table that contains itself: JSON values cannot have cycles", encode, c)
  local s = {}
  s[1] = s
  checkerr("json%.encode: value%[1%] is a table that contains itself", encode, s)
end
checkerr("json%.encode: value mixes array items and named fields", encode, { 1, 2, x = 3 })
checkerr("json%.array: the table holds named fields, which an array cannot", json.array, { 1, y = 2 })
checkerr("json%.object: the table holds array items, which an object cannot", json.object, { 1, 2 })
do
  local marked = json.array()
  marked.y = 2
  checkerr("json%.encode: value%.list is marked array %(json%.array, decoded JSON or its __jsontype%) but holds named fields",
    encode, { list = marked })
end
checkerr("json%.encode: value has a boolean key: object keys are strings and array positions are integers", encode, { [true] = 1 })
checkerr("json%.encode: value%.m has a table key", encode, { m = { [{}] = 1 } })
checkerr("json%.encode: value has a number key", encode, { [1.5] = 1 })
checkerr("json%.encode: value has a hole at %[1%]", encode, { [0] = 1 })
checkerr("json%.encode: value has a hole at %[2%]: an array holds items 1 to n with none missing", encode, { 1, nil, 3 })
checkerr("json%.encode: value%.s is a string that is not valid UTF%-8: JSON text is UTF%-8; encode binary data as base64 or hex first",
  encode, { s = "a\255" })
checkerr("json%.encode: value has a key that is not valid UTF%-8", encode, { ["\192\128"] = 1 })
checkerr('json%.encode: value%["a b"%]%[2%] is NaN', encode, { ["a b"] = { 1, 0 / 0 } })
checkerr("json%.encode: value is a store object: JSON holds only null, booleans, numbers, strings and tables", encode, services.store)
checkerr("json%.encode: opts must be a table", encode, 1, 2)
checkerr("json%.encode: opts%.indent must be", encode, 1, { indent = true })
checkerr("json%.encode: value mixes array items", encode, { 1, [3] = 3, x = 1 })
checkerr("boom", encode, setmetatable({}, { __tojson = function() error("boom") end }))
do
  local function nested(n) local t = {} local c = t for _ = 2, n do c[1] = {} c = c[1] end return t end
  eq(#encode(nested(100)), 200, "100 levels (the one limit) are fine")
  checkerr("json%.encode: value%[1%]%[1%]%[1%]%[1%]…%(92 more%)…%[1%]%[1%]%[1%]%[1%] is nested too deeply %(more than 100 tables%)",
    encode, nested(101))
  checkerr("json%.encode: value.* is nested too deeply %(more than 100 tables%)", encode, nested(100000))
  -- __tojson results pass the same checks.
  checkerr("json%.encode: value%.at%.x is NaN", encode,
    { at = setmetatable({}, { __tojson = function() return { x = 0 / 0 } end }) })
  local looped = setmetatable({}, { __tojson = function(t) return { again = t } end })
  checkerr("json%.encode: value%.again is a table that contains itself", encode, looped)
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
  checkerr("unexpected byte 0xb at line 1, column 1", decode, "\v1")
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
  local deep = string.rep("[", 100) .. string.rep("]", 100)
  eq(encode(decode(deep)), deep, "100 levels (the one limit) are fine")
  eq(decode("[[1]]", { max_depth = 2 })[1][1], 1)
  checkerr("nested deeper than 2 levels", decode, "[[[1]]]", { max_depth = 2 })
end

-- Decoding errors --------------------------------------------------------------------------------
checkerr("^" .. here .. ":%d+: json%.decode: invalid JSON: unexpected 'x' at line 1, column 5 %(byte 4%) %(expected a value%)",
  function() decode("[1, x]") end)
-- Each bad document and the end of its message (after "json.decode: invalid JSON: "), found as
-- plain text.
local decode_errors = {
  { "", "the text ends at line 1, column 1 (byte 0) (expected a value)" },
  { "   ", "the text ends at line 1, column 4 (byte 3) (expected a value)" },
  { "[1,", "the text ends at line 1, column 4 (byte 3) (expected a value)" },
  { '{"a":1', "the text ends at line 1, column 7 (byte 6) (expected ',' or '}')" },
  { "[1,]", "unexpected ']' at line 1, column 4 (byte 3) (expected a value)" },
  { '{"a":1,}', "unexpected '}' at line 1, column 8 (byte 7) (expected a string key)" },
  { "{a:1}", "unexpected 'a' at line 1, column 2 (byte 1) (expected a string key)" },
  { '{"a" 1}', "unexpected '1' at line 1, column 6 (byte 5) (expected ':')" },
  { "[1 2]", "unexpected '2' at line 1, column 4 (byte 3) (expected ',' or ']')" },
  { "[1]x", "unexpected 'x' at line 1, column 4 (byte 3) (expected the end of the document)" },
  { "1 2", "unexpected '2' at line 1, column 3 (byte 2) (expected the end of the document)" },
  { "01", "unexpected '1' at line 1, column 2 (byte 1) (expected the end of the document)" },
  { "-", "the text ends at line 1, column 2 (byte 1) (expected a digit)" },
  { "-a", "unexpected 'a' at line 1, column 2 (byte 1) (expected a digit)" },
  { "1.", "the text ends at line 1, column 3 (byte 2) (expected a digit after '.')" },
  { "1.e3", "unexpected 'e' at line 1, column 3 (byte 2) (expected a digit after '.')" },
  { ".5", "unexpected '.' at line 1, column 1 (byte 0) (expected a value)" },
  { "+1", "unexpected '+' at line 1, column 1 (byte 0) (expected a value)" },
  { "1e+", "the text ends at line 1, column 4 (byte 3) (expected a digit in the exponent)" },
  { "0x10", "unexpected 'x' at line 1, column 2 (byte 1) (expected the end of the document)" },
  { "NaN", "unexpected 'N' at line 1, column 1 (byte 0) (expected a value)" },
  { "Infinity", "unexpected 'I' at line 1, column 1 (byte 0) (expected a value)" },
  { "tru", "the text ends at line 1, column 4 (byte 3) (expected 'true')" },
  { "trUe", "unexpected 'U' at line 1, column 3 (byte 2) (expected 'true')" },
  { "'a'", "unexpected ''' at line 1, column 1 (byte 0) (expected a value)" },
  { '"abc', "the text ends at line 1, column 5 (byte 4) (expected '\"' closing the string)" },
  { '"a\tb"', "unexpected byte 0x9 at line 1, column 3 (byte 2) (expected an escape such as \\n or \\u0000 in place of a control character)" },
  { '"a\0b"', "unexpected byte 0x0 at line 1, column 3 (byte 2)" },
  { '"\\x"', "unexpected 'x' at line 1, column 3 (byte 2) (expected one of" },
  { '"\\u12g4"', "unexpected 'g' at line 1, column 6 (byte 5) (expected four hex digits)" },
  { '"\\ud800"', "a lone surrogate \\ud800 at line 1, column 2 (byte 1)" },
  { '"\\udc00"', "a lone surrogate \\udc00 at line 1, column 2 (byte 1)" },
  { '"\\ud800\\u0041"', "a lone surrogate \\ud800" },
  { '"\255"', "a string that is not valid UTF-8 at line 1, column 2 (byte 1) (JSON text is UTF-8)" },
  { '"\237\160\128"', "a string that is not valid UTF-8" },
  { "[é]", "unexpected byte 0xc3 at line 1, column 2 (byte 1) (expected a value)" },
  { "[1,\n 2,\n\n  x]", "unexpected 'x' at line 4, column 3 (byte 11)" },
  { '["é", x]', "unexpected 'x' at line 1, column 7 (byte 7)", "columns count characters" },
  { "[\r\n1", "the text ends at line 2, column 2 (byte 4)" },
  { "\239\187\191", "the text ends at line 1, column 2 (byte 3) (expected a value)" },
  { string.rep("[", 101) .. string.rep("]", 101), "nested deeper than 100 levels at line 1, column 101 (byte 100)" },
  { string.rep('{"a":', 100000), "nested deeper than 100 levels" },
  -- Too large for a double, as the config reader and JSON-RPC refuse it (not inf).
  { "1e400", "the number 1e400 at line 1, column 1 (byte 0) is out of range" },
  { "[1, -1e400]", "the number -1e400 at line 1, column 5 (byte 4) is out of range" },
  { "1" .. string.rep("0", 400), "is out of range" },
}
for _, case in ipairs(decode_errors) do
  local ok, err = pcall(decode, case[1])
  assert(not ok, "expected an error for " .. case[1])
  assert(err:find("^json%.decode: invalid JSON: "), err)
  assert(err:find(case[2], 1, true), "error '" .. err .. "' does not contain '" .. case[2] .. "'")
end
checkerr("json%.decode: expected a string, got nil", decode)
checkerr("json%.decode: expected a string, got table", decode, {})
checkerr("json%.decode: opts%.maxDepth must be an integer from 1 to 100, got 0", decode, "1", { max_depth = 0 })
checkerr("json%.decode: opts%.maxDepth must be an integer from 1 to 100, got 1000", decode, "1", { maxDepth = 1000 })
checkerr("json%.decode: opts%.maxDepth must be", decode, "1", { maxDepth = 0 })
-- One spelling rule: camelCase, the snake_case of earlier releases still read; unknown keys named.
eq(decode("[[1]]", { maxDepth = 2 })[1][1], 1)
checkerr("nested deeper than 2 levels", decode, "[[[1]]]", { maxDepth = 2 })
eq(encode({ b = 1, a = 2 }, { sortKeys = true }), '{"a":2,"b":1}')
checkerr("json%.encode: unknown option 'sortkeys' %(options: indent, sortKeys; did you mean 'sortKeys'%?%)", encode, {}, { sortkeys = false })
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

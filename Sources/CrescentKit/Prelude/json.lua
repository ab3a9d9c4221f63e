-- json.lua: Crescent's `json` global, a strict RFC 8259 JSON encoder and decoder.
-- Uses only standard Lua 5.4.
--
-- json.encode(v[, opts]) -> string      opts.indent: spaces (or a string) per level; default compact
--                                       opts.sortKeys: default true (deterministic output)
-- json.decode(s[, opts]) -> value       opts.maxDepth: nesting limit, default 1000
-- Option keys follow the one rule of Crescent's option tables: camelCase, as `maxBytes`; the
-- snake_case spellings of earlier releases (`sort_keys`, `max_depth`) keep working, and an
-- unknown key is an error that lists the options.
-- json.null                             unique sentinel for JSON null (in arrays and objects)
-- json.array([t]), json.object([t])     mark a table's shape; return it
--
-- Decisions:
--   * Numbers keep Lua's subtype across a round trip: integers encode as integers (`3`), floats
--     always carry a fraction or an exponent (`3.0`, `0.1`, `1e+300`) using the shortest of
--     %.14g..%.17g that reads back exactly. Decoding `3` gives the integer 3; `3.0`, `3e2`, `-0.5`
--     give floats; integers outside 64 bits give floats. NaN and infinities are errors, and so is a number too large for a double (`1e400`).
--   * Shape: a table with keys exactly 1..n is an array, one with only string keys an object, and
--     an unmarked empty table encodes as `{}`. json.array(t) / json.object(t) force the shape by
--     setting a metatable whose `__jsontype` field is "array" / "object" (any metatable with that
--     field works, so classes can declare it). Decoded arrays and objects carry the same
--     metatables, so `[]` and `{}` round-trip; decoded nulls are json.null, so keys and indices are kept.
--   * A value whose metatable has `__tojson` is replaced by __tojson(value) before encoding.
--   * Tables are read raw (next / rawget): __index and __pairs are not used, except for a table
--     whose metatable is protected (`__metatable`, as a service's read-only models have), which
--     encodes as what pairs shows.
--   * Strings must be valid UTF-8 both ways (JSON text is UTF-8); encode gives an error for
--     binary data rather than producing invalid JSON. Decoding accepts and skips a leading BOM.
--   * Errors name the function, the place (`value.items[3]`, or line and column) and the fix; they
--     are raised at the caller's level.

local type, next, rawget, rawequal, getmetatable, setmetatable = type, next, rawget, rawequal,
  getmetatable, setmetatable
local error, pcall, tonumber, tostring = error, pcall, tonumber, tostring
local math_type, huge = math.type, math.huge
local sfind, sformat, sbyte, schar, ssub, sgsub, srep = string.find, string.format, string.byte,
  string.char, string.sub, string.gsub, string.rep
local concat, sort = table.concat, table.sort
local utf8len, utf8char, utf8codepoint = utf8.len, utf8.char, utf8.codepoint

-- The chunk takes json.null and the shape metatables (marks.lua), made before the module loads.
local NULL, ARRAY_MT, OBJECT_MT = ...

local json = {}

json.null = NULL

local function mark(name, mt)
  return function(t)
    if t == nil then t = {} end
    if type(t) ~= "table" or rawequal(t, NULL) then
      error("json." .. name .. ": expected a table, got " .. type(t), 2)
    end
    local current = getmetatable(t)
    if current ~= nil and current ~= ARRAY_MT and current ~= OBJECT_MT then
      error("json." .. name .. ": the table already has a metatable (set __jsontype = \"" .. name
        .. "\" in it instead)", 2)
    end
    return setmetatable(t, mt)
  end
end
json.array = mark("array", ARRAY_MT)
json.object = mark("object", OBJECT_MT)

-- Errors are thrown as tagged tables from deep inside, caught once by the entry point and
-- re-raised from there at the level of its caller, so the position points at the caller's line.
local function fail(msg) error({ json_error = msg }, 0) end

local function finish(ok, result)
  if ok then return result end
  if type(result) == "table" and result.json_error then error(result.json_error, 3) end
  error(result, 0) -- not ours (e.g. raised by a __tojson): pass it on untouched
end

---------------------------------------------------------------------------------------------------
-- Encoding

local ESCAPES = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
  ["\r"] = "\\r", ["\t"] = "\\t" }
for b = 0, 31 do ESCAPES[schar(b)] = ESCAPES[schar(b)] or sformat("\\u%04x", b) end

local function is_identifier(k) return sfind(k, "^[A-Za-z_][A-Za-z0-9_]*$") ~= nil end

-- "value.items[3]" for the keys st.keys[1..depth]
local function path(st, depth)
  local parts = { "value" }
  for i = 1, depth do
    local k = st.keys[i]
    if type(k) == "string" then
      parts[i + 1] = is_identifier(k) and "." .. k or '["' .. sgsub(k, '[\0-\31"\\]', ESCAPES) .. '"]'
    else
      parts[i + 1] = "[" .. tostring(k) .. "]"
    end
  end
  if #parts > 24 then -- very deep: keep both ends readable
    return concat(parts, "", 1, 8) .. "..." .. concat(parts, "", #parts - 11)
  end
  return concat(parts)
end

local function encode_string(st, s, depth, what)
  local ok, bad = true, nil
  if sfind(s, "[\128-\255]") then ok, bad = utf8len(s) end -- ASCII needs no check
  if not ok then
    fail(sformat("json.encode: invalid UTF-8%s at %s (byte %d); JSON strings must be UTF-8, "
      .. "so encode binary data as base64 or hex first", what or "", path(st, depth), bad))
  end
  if sfind(s, '[\0-\31"\\]') then s = sgsub(s, '[\0-\31"\\]', ESCAPES) end
  return '"' .. s .. '"'
end

local FLOAT_FORMATS = { "%.14g", "%.15g", "%.16g", "%.17g" }

local function encode_float(st, x, depth)
  if x ~= x then
    fail("json.encode: NaN at " .. path(st, depth) .. " (JSON has no NaN; use json.null or a string)")
  elseif x == huge or x == -huge then
    fail("json.encode: " .. (x > 0 and "" or "-") .. "infinity at " .. path(st, depth)
      .. " (JSON has no infinity; use json.null, a string or a large number)")
  end
  local s
  for i = 1, 4 do -- the shortest form that reads back as the same float
    s = sformat(FLOAT_FORMATS[i], x)
    if tonumber(s) == x then break end
  end
  if not sfind(s, "[.e]") then s = s .. ".0" end -- decodes back as a float, not an integer
  return s
end

local encode_value -- forward

local function encode_table(st, t, depth)
  if st.onpath[t] then
    fail("json.encode: cycle at " .. path(st, depth) .. " (it is the table at "
      .. path(st, st.onpath[t]) .. " again; JSON cannot represent cycles)")
  end
  if depth >= st.max_depth then
    fail("json.encode: nesting deeper than " .. st.max_depth .. " levels at " .. path(st, depth))
  end
  local mt = getmetatable(t)
  local shape = type(mt) == "table" and rawget(mt, "__jsontype") or nil
  if mt ~= nil and type(mt) ~= "table" then
    -- A protected metatable (a service's read-only model) keeps the fields out of reach of next
    -- and rawget: what pairs shows is all a script can see, so that is what is encoded.
    local fields = {}
    for k, v in pairs(t) do fields[k] = v end
    t = fields
  end
  -- Classify the keys in one pass.
  local count, maxn, nstr = 0, 0, 0
  for k in next, t do
    if type(k) == "string" then
      nstr = nstr + 1
    elseif math_type(k) == "integer" and k > 0 then
      count = count + 1
      if k > maxn then maxn = k end
    elseif type(k) == "number" then
      fail("json.encode: key " .. tostring(k) .. " at " .. path(st, depth)
        .. " (array indices must be integers 1..n and object keys strings)")
    else
      fail("json.encode: key of type " .. type(k) .. " at " .. path(st, depth)
        .. " (object keys must be strings)")
    end
  end
  local is_array
  if shape == "array" or shape == "object" then
    is_array = shape == "array"
  else
    is_array = count > 0
  end
  if not is_array and count > 0 then -- only possible when marked as an object
    fail("json.encode: key of type number at " .. path(st, depth)
      .. " (object keys must be strings; convert them with tostring)")
  elseif is_array and nstr > 0 then
    fail("json.encode: mixed keys at " .. path(st, depth) .. " (table has both array items and "
      .. "string keys; put the items under a string key or use only one kind)")
  end
  if is_array and maxn ~= count then
    fail(sformat("json.encode: sparse array at %s (keys 1..%d but only %d items; fill the holes "
      .. "with json.null)", path(st, depth), maxn, count))
  end

  local buf = st.buf
  local inner, outer, colon = "", "", ":"
  if st.indent then
    inner = "\n" .. srep(st.indent, depth + 1)
    outer = "\n" .. srep(st.indent, depth)
    colon = ": "
  end
  st.onpath[t] = depth
  if is_array then
    if count == 0 then buf[#buf + 1] = "[]" else
      buf[#buf + 1] = "["
      for i = 1, count do
        buf[#buf + 1] = i > 1 and "," .. inner or inner
        st.keys[depth + 1] = i
        encode_value(st, rawget(t, i), depth + 1)
      end
      buf[#buf + 1] = outer .. "]"
    end
  elseif nstr == 0 then
    buf[#buf + 1] = "{}"
  else
    local keys, n = {}, 0
    for k in next, t do n = n + 1; keys[n] = k end
    if st.sort_keys then sort(keys) end
    buf[#buf + 1] = "{"
    for i = 1, n do
      local k = keys[i]
      buf[#buf + 1] = i > 1 and "," .. inner or inner
      st.keys[depth + 1] = k
      buf[#buf + 1] = encode_string(st, k, depth, " in a key") .. colon
      encode_value(st, rawget(t, k), depth + 1)
    end
    buf[#buf + 1] = outer .. "}"
  end
  st.onpath[t] = nil
end

function encode_value(st, v, depth, converted)
  local tv = type(v)
  if not converted and (tv == "table" or tv == "userdata") then
    local mt = getmetatable(v)
    local tojson = type(mt) == "table" and rawget(mt, "__tojson")
    if tojson then
      local r = tojson(v)
      if not rawequal(r, v) then return encode_value(st, r, depth, true) end
    end
  end
  local buf = st.buf
  if tv == "string" then
    buf[#buf + 1] = encode_string(st, v, depth)
  elseif tv == "number" then
    buf[#buf + 1] = math_type(v) == "integer" and sformat("%d", v) or encode_float(st, v, depth)
  elseif tv == "boolean" then
    buf[#buf + 1] = v and "true" or "false"
  elseif v == nil or rawequal(v, NULL) then
    buf[#buf + 1] = "null"
  elseif tv == "table" then
    encode_table(st, v, depth)
  else
    fail("json.encode: cannot encode a " .. tv .. " at " .. path(st, depth)
      .. " (JSON has only null, booleans, numbers, strings, arrays and objects; convert it first)")
  end
end

-- `opts` with each key under its one spelling (`spellings` maps every accepted key to it), or an
-- error at the caller of `fn` naming an unknown key and the options.
local function read_options(fn, opts, spellings, names)
  if opts == nil then return {} end
  if type(opts) ~= "table" then error(fn .. ": opts must be a table, got " .. type(opts), 3) end
  local read = {}
  for key, value in pairs(opts) do
    local name = spellings[key]
    if not name then
      error(fn .. ": unknown option '" .. tostring(key) .. "' (options: " .. names .. ")", 3)
    end
    read[name] = value
  end
  return read
end

local encode_spellings = { indent = "indent", sortKeys = "sortKeys", sort_keys = "sortKeys" }
local decode_spellings = { maxDepth = "maxDepth", max_depth = "maxDepth" }

function json.encode(v, opts)
  opts = read_options("json.encode", opts, encode_spellings, "indent, sortKeys")
  local indent = opts.indent
  if type(indent) == "number" then indent = indent > 0 and srep(" ", indent // 1) or nil
  elseif indent ~= nil and type(indent) ~= "string" then
    error("json.encode: opts.indent must be a number of spaces or a string, got " .. type(indent), 2)
  end
  local st = { buf = {}, keys = {}, onpath = {}, indent = indent, max_depth = 1000 }
  st.sort_keys = opts.sortKeys ~= false
  local result = finish(pcall(function()
    encode_value(st, v, 0)
    return concat(st.buf)
  end))
  return result -- not a tail call: finish's error level counts this frame
end

---------------------------------------------------------------------------------------------------
-- Decoding: a recursive descent parser over one string, using string.find to skip whole runs
-- (whitespace, plain string content, digits) instead of going byte by byte.

local src, max_depth = "", 1000 -- the text being decoded (decode never re-enters itself)

local function position(pos) -- "line L, column C" (columns count characters)
  local line, start = 1, 1
  while true do
    local nl = sfind(src, "\n", start, true)
    if not nl or nl >= pos then break end
    line, start = line + 1, nl + 1
  end
  local col = (pos > start and utf8len(src, start, pos - 1) or pos - start) + 1
  return "line " .. line .. ", column " .. col
end

local function decode_fail(pos, msg, expected)
  fail("json.decode: " .. msg .. " at " .. position(pos) .. (expected and " (expected " .. expected .. ")" or ""))
end

-- The error for the byte at pos, which is not what the grammar allows there.
local function unexpected(pos, expected)
  local c = sbyte(src, pos)
  if not c then decode_fail(pos, "unexpected end of input", expected) end
  local shown
  if c >= 32 and c < 127 then shown = "'" .. schar(c) .. "'"
  elseif c >= 128 then
    local ok, cp = pcall(utf8codepoint, src, pos)
    shown = ok and sformat("'%s' (U+%04X)", utf8char(cp), cp) or sformat("byte %d", c)
  else shown = sformat("U+%04X", c) end
  decode_fail(pos, "unexpected character " .. shown, expected)
end

local function skip(pos) return sfind(src, "[^ \t\r\n]", pos) or #src + 1 end

local SIMPLE_ESCAPES = { [34] = '"', [92] = "\\", [47] = "/", [98] = "\b", [102] = "\f",
  [110] = "\n", [114] = "\r", [116] = "\t" }

local function hex4(pos) -- the 4 hex digits at pos as a number
  local h = ssub(src, pos, pos + 3)
  if not sfind(h, "^%x%x%x%x$") then
    local _, e = sfind(src, "^%x*", pos)
    unexpected(e + 1, "4 hex digits after \\u")
  end
  return tonumber(h, 16)
end

local function parse_string(pos) -- pos: just after the opening quote
  local parts, n = nil, 0
  while true do
    local e = sfind(src, '[\0-\31"\\]', pos)
    if not e then decode_fail(#src + 1, "unexpected end of input in a string", "'\"'") end
    local c = sbyte(src, e)
    if c == 34 then -- closing quote
      if not parts then return ssub(src, pos, e - 1), e + 1 end
      parts[n + 1] = ssub(src, pos, e - 1)
      return concat(parts), e + 1
    elseif c < 32 then
      decode_fail(e, sformat("unescaped control character U+%04X in a string", c),
        "an escape such as \\n or \\u00XX")
    end
    parts = parts or {}
    n = n + 1; parts[n] = ssub(src, pos, e - 1)
    local esc = sbyte(src, e + 1)
    local simple = SIMPLE_ESCAPES[esc]
    if simple then
      n = n + 1; parts[n] = simple; pos = e + 2
    elseif esc == 117 then -- \uXXXX, possibly a surrogate pair
      local cp = hex4(e + 2)
      pos = e + 6
      if cp >= 0xD800 and cp <= 0xDBFF then
        if ssub(src, pos, pos + 1) ~= "\\u" then
          decode_fail(e, sformat("lone surrogate \\u%04X in a string", cp), "a \\uDC00-\\uDFFF after it")
        end
        local lo = hex4(pos + 2)
        if lo < 0xDC00 or lo > 0xDFFF then
          decode_fail(pos, sformat("invalid low surrogate \\u%04X in a string", lo), "\\uDC00-\\uDFFF")
        end
        cp = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00)
        pos = pos + 6
      elseif cp >= 0xDC00 and cp <= 0xDFFF then
        decode_fail(e, sformat("lone surrogate \\u%04X in a string", cp), "a \\uD800-\\uDBFF before it")
      end
      n = n + 1; parts[n] = utf8char(cp)
    else
      unexpected(e + 1, "an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX")
    end
  end
end

local function parse_number(pos)
  local start = pos
  if sbyte(src, pos) == 45 then pos = pos + 1 end -- '-'
  local _, e = sfind(src, "^%d+", pos)
  if not e then unexpected(pos, "a digit") end
  if sbyte(src, pos) == 48 and e > pos then decode_fail(pos, "leading zero in a number") end
  if sbyte(src, e + 1) == 46 then -- '.'
    local _, f = sfind(src, "^%d+", e + 2)
    if not f then unexpected(e + 2, "a digit after '.'") end
    e = f
  end
  local c = sbyte(src, e + 1)
  if c == 101 or c == 69 then -- 'e' / 'E'
    local _, x = sfind(src, "^[+-]?%d+", e + 2)
    if not x then
      unexpected((sfind(src, "^[+-]", e + 2) and e + 3 or e + 2), "a digit in the exponent")
    end
    e = x
  end
  -- tonumber gives a float for a fraction or exponent (keeping -0.0) and for an integer that
  -- does not fit in 64 bits, an integer otherwise
  local text = ssub(src, start, e)
  local n = tonumber(text)
  -- Too large for a double: refused, as the config reader and JSON-RPC refuse it.
  if n == huge or n == -huge then
    decode_fail(start, "the number " .. ssub(text, 1, 40) .. " is out of range")
  end
  return n, e + 1
end

local function parse_literal(pos, word, value)
  if ssub(src, pos, pos + #word - 1) == word then return value, pos + #word end
  for i = 1, #word do -- find the first wrong byte, for a precise column
    if sbyte(src, pos + i - 1) ~= sbyte(word, i) then unexpected(pos + i - 1, "'" .. word .. "'") end
  end
end

local parse_value -- forward

local function parse_array(pos, depth)
  local arr, n = {}, 0
  pos = skip(pos + 1)
  if sbyte(src, pos) == 93 then return setmetatable(arr, ARRAY_MT), pos + 1 end
  while true do
    local v
    v, pos = parse_value(pos, depth)
    n = n + 1; arr[n] = v
    pos = skip(pos)
    local c = sbyte(src, pos)
    if c == 44 then pos = pos + 1
    elseif c == 93 then return setmetatable(arr, ARRAY_MT), pos + 1
    else unexpected(pos, "',' or ']'") end
  end
end

local function parse_object(pos, depth)
  local obj = {}
  pos = skip(pos + 1)
  if sbyte(src, pos) == 125 then return setmetatable(obj, OBJECT_MT), pos + 1 end
  while true do
    if sbyte(src, pos) ~= 34 then unexpected(pos, "a string key") end
    local k, v
    k, pos = parse_string(pos + 1)
    pos = skip(pos)
    if sbyte(src, pos) ~= 58 then unexpected(pos, "':'") end
    v, pos = parse_value(pos + 1, depth)
    obj[k] = v
    pos = skip(pos)
    local c = sbyte(src, pos)
    if c == 44 then pos = skip(pos + 1)
    elseif c == 125 then return setmetatable(obj, OBJECT_MT), pos + 1
    else unexpected(pos, "',' or '}'") end
  end
end

function parse_value(pos, depth)
  pos = skip(pos)
  local c = sbyte(src, pos)
  if c == 34 then return parse_string(pos + 1)
  elseif c == 123 or c == 91 then
    if depth >= max_depth then decode_fail(pos, "nesting deeper than " .. max_depth .. " levels") end
    if c == 123 then return parse_object(pos, depth + 1) end
    return parse_array(pos, depth + 1)
  elseif c == 45 or c and c >= 48 and c <= 57 then return parse_number(pos)
  elseif c == 116 then return parse_literal(pos, "true", true)
  elseif c == 102 then return parse_literal(pos, "false", false)
  elseif c == 110 then return parse_literal(pos, "null", NULL)
  end
  unexpected(pos, "a value")
end

local function parse_document(s)
  src = s
  local ok, bad = utf8len(s)
  if not ok then decode_fail(bad, "invalid UTF-8") end
  local pos = ssub(s, 1, 3) == "\239\187\191" and 4 or 1 -- skip a byte order mark
  local v
  v, pos = parse_value(pos, 0)
  pos = skip(pos)
  if pos <= #s then decode_fail(pos, "trailing characters after the JSON value") end
  return v
end

function json.decode(s, opts)
  if type(s) ~= "string" then error("json.decode: expected a string, got " .. type(s), 2) end
  opts = read_options("json.decode", opts, decode_spellings, "maxDepth")
  max_depth = opts.maxDepth or 1000
  if math_type(max_depth) ~= "integer" or max_depth < 1 then
    error("json.decode: opts.maxDepth must be an integer >= 1, got " .. tostring(max_depth), 2)
  end
  local ok, result = pcall(parse_document, s)
  src = "" -- do not keep the text alive
  result = finish(ok, result)
  return result
end

return json

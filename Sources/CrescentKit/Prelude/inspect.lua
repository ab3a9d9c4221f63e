-- inspect.lua: Crescent's `inspect(v[, opts])` global, a readable, cycle-safe rendering of any
-- Lua value (in the spirit of Node's util.inspect). Uses only standard Lua 5.4.
--
-- The chunk returns a callable table: `inspect(v[, opts])` returns a string and never raises for
-- any `v` (only malformed opts raise). `inspect.defaults` holds the defaults and may be changed.
--
-- opts: depth   (4)    nesting levels expanded; deeper tables show as `{...}` (`{}` when empty)
--       length  (100)  items shown per table, then `... (N more)`
--       string  (10000) bytes shown per string, then `...(N bytes more)` (never splits a character)
--       indent  (2)    spaces (or a string) per level;  newline ("\n");  width (72) for one-line form
--
-- Output rules:
--   * Strings read back as Lua: "double quoted", \n \r \t \" \\ escaped, other control bytes and
--     invalid UTF-8 bytes as \ddd (always 3 digits); valid UTF-8 is printed as is.
--   * Numbers keep their subtype: 3 vs 3.0; floats use the shortest form that reads back exactly;
--     math.mininteger, NaN as 0/0, math.huge and -math.huge as Lua reads them back.
--   * Tables: items 1..n first without keys, then the other keys sorted (numbers by value, strings
--     by bytes, then other types by type name); identifier keys bare (`x = 1`), others `["a b"] = 1`.
--     One line (`{ 1, 2, x = 3 }`) when it fits in `width` columns, else one item per line.
--   * A table met again while it is being rendered (a cycle) shows as `<cycle>`. A table reached
--     through several paths is rendered fully once, prefixed with an id (`<1>{ ... }`); its later
--     appearances show as `<table 1>` (`<Name 1>` when its metatable has __name).
--   * Metatables are read with getmetatable only (locked ones are fine) and traversal uses next /
--     rawget, so __index, __pairs and __len are never triggered, but for the host's data models
--     (a metatable locked with the type's name and a `name {` __tostring): they show as
--     `placemark { name = ... }`, their fields read through pairs and folded at `width` like any table. A __tostring result is shown as is
--     (`<Type: error in __tostring>` if it fails); a __name gives `<Name>{ ... }` / `<Name>`.
--   * Functions `<function: file:line>` (`<function: builtin>` for C), threads `<thread>`,
--     userdata `<userdata>` or `<Name>`. Nesting beyond 1000 levels always shows as `{...}`.

-- The host's `resembles(name, names)` (the closest of `names`), nil when loaded without the host.
local resembles = ...
local type, next, rawget, ipairs, getmetatable = type, next, rawget, ipairs, getmetatable
local tostring, tonumber, pcall, setmetatable, pairs, select = tostring, tonumber, pcall, setmetatable, pairs, select
local error, math_type, huge, math_mininteger = error, math.type, math.huge, math.mininteger
local sfind, sformat, sbyte, schar, ssub, srep = string.find, string.format, string.byte,
  string.char, string.sub, string.rep
local concat, sort = table.concat, table.sort
local utf8len = utf8.len
local getinfo = debug and debug.getinfo

local PACK_WIDTH = 12 -- array items this short share lines in the multi-line form
local MAX_NESTING = 1000 -- hard cap: keeps recursion and output size bounded whatever opts say

---------------------------------------------------------------------------------------------------
-- Atoms

local FLOAT_FORMATS = { "%.14g", "%.15g", "%.16g", "%.17g" }

local function format_number(n)
  if math_type(n) == "integer" then
    -- Its digits read back as a float (the minus is an operator on 9223372036854775808, past
    -- the largest integer): its name reads back as itself.
    if n == math_mininteger then return "math.mininteger" end
    return sformat("%d", n)
  end
  -- Written as Lua reads it back (string.format's %q writes (0/0)); nan's sign is not shown,
  -- as no arithmetic gives it meaning.
  if n ~= n then return "0/0" end
  if n == huge then return "math.huge" elseif n == -huge then return "-math.huge" end
  local s
  for i = 1, 4 do -- the shortest form that reads back as the same float
    s = sformat(FLOAT_FORMATS[i], n)
    if tonumber(s) == n then break end
  end
  if not sfind(s, "[.eEn]") then s = s .. ".0" end -- 3.0 must not look like the integer 3
  return s
end

local ESCAPES = { ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ['"'] = '\\"', ["\\"] = "\\\\" }
for b = 0, 127 do -- three digits, so that a following digit is never read as part of the escape
  local c = schar(b)
  if not ESCAPES[c] and (b < 32 or b == 127) then ESCAPES[c] = sformat("\\%03d", b) end
end

local PLAIN_RUN = '^[^\0-\31\127"\\\128-\255]+'

-- Quotes `s` (at most `max` bytes of it) so that it reads back as the same Lua string.
local function quote(s, max)
  local more = 0
  if #s > max then
    local cut = max
    while cut > 0 and cut > max - 3 do -- back off so the cut does not split a UTF-8 sequence
      local b = sbyte(s, cut + 1)
      if b < 0x80 or b >= 0xC0 then break end
      cut = cut - 1
    end
    more, s = #s - cut, ssub(s, 1, cut)
  end
  local out
  if not sfind(s, '[\0-\31\127"\\\128-\255]') then
    out = '"' .. s .. '"'
  else
    local parts, n, i, len = { '"' }, 1, 1, #s
    while i <= len do
      local _, e = sfind(s, PLAIN_RUN, i)
      if e then
        n = n + 1; parts[n] = ssub(s, i, e); i = e + 1
      elseif sbyte(s, i) < 128 then
        n = n + 1; parts[n] = ESCAPES[ssub(s, i, i)]; i = i + 1
      else -- a run of high bytes: copy its valid UTF-8, escape the rest byte by byte
        _, e = sfind(s, "^[\128-\255]+", i)
        while i <= e do
          local ok, bad = utf8len(s, i, e)
          if ok then n = n + 1; parts[n] = ssub(s, i, e); i = e + 1
          else
            if bad > i then n = n + 1; parts[n] = ssub(s, i, bad - 1) end
            n = n + 1; parts[n] = sformat("\\%03d", sbyte(s, bad)); i = bad + 1
          end
        end
      end
    end
    parts[n + 1] = '"'
    out = concat(parts)
  end
  if more > 0 then out = out .. "...(" .. more .. " bytes more)" end
  return out
end

local KEYWORDS = {}
for w in ("and break do else elseif end false for function goto if in local nil not or repeat "
  .. "return then true until while"):gmatch("%S+") do KEYWORDS[w] = true end

local function is_identifier(k)
  return type(k) == "string" and sfind(k, "^[A-Za-z_][A-Za-z0-9_]*$") ~= nil and not KEYWORDS[k]
end

-- The fields of a data model the host made (a read-only record such as a placemark) as a plain
-- table, cached per record in st.records, with its type name in st.labels; `v` itself for any
-- other value. A data model's metatable is locked with its type name (getmetatable answers
-- "placemark") and its __tostring starts with that name and a brace; its fields are what pairs
-- lists through the binding's __pairs.
local function record_of(st, v)
  if type(v) ~= "table" then return v end
  local fields = st.records[v]
  if fields ~= nil then return fields or v end
  st.records[v] = false
  local name = getmetatable(v)
  if type(name) ~= "string" then return v end
  local ok, text = pcall(tostring, v)
  if not ok or ssub(text, 1, #name + 2) ~= name .. " {" then return v end
  local copied, copy = pcall(function()
    local t = {}
    for k, value in pairs(v) do t[k] = value end
    return t
  end)
  if not copied then return v end
  st.records[v], st.labels[copy] = copy, name .. " "
  return copy
end

-- What a table's or userdata's metatable says about it, cached per value in st.meta:
-- { text = __tostring result or error label } or { name = __name } or false (nothing special).
local function meta_of(st, v)
  local m = st.meta[v]
  if m ~= nil then return m end
  m = false
  local mt = getmetatable(v) -- honours __metatable; never raises
  if mt ~= nil or type(v) == "userdata" then
    -- tostring() sees the real metatable even when it is locked. Its default result is
    -- "<__name or type>: <address>", which tells us whether a __tostring exists.
    local ok, s = pcall(tostring, v)
    if not ok then
      local name = type(mt) == "table" and rawget(mt, "__name")
      m = { text = "<" .. (type(name) == "string" and name or type(v)) .. ": error in __tostring>" }
    else
      local suffix = ": " .. sformat("%p", v)
      if #s > #suffix and ssub(s, -#suffix) == suffix then
        local prefix = ssub(s, 1, -#suffix - 1)
        m = prefix ~= type(v) and { name = prefix } or false
      else
        if #s > st.string then s = ssub(s, 1, st.string) .. "...(" .. (#s - st.string) .. " bytes more)" end
        m = { text = s }
      end
    end
  end
  st.meta[v] = m
  return m
end

local function atom(st, v) -- any value but a table to be expanded
  local t = type(v)
  if t == "string" then return quote(v, st.string)
  elseif t == "number" then return format_number(v)
  elseif t == "nil" or t == "boolean" then return tostring(v)
  elseif t == "function" then
    local info = getinfo and getinfo(v, "S")
    if not info then return "<function>" end
    if info.what == "C" then return "<function: builtin>" end
    return "<function: " .. info.short_src .. ":" .. info.linedefined .. ">"
  elseif t == "thread" then return "<thread>"
  else -- userdata
    local m = meta_of(st, v)
    return m and (m.text or "<" .. m.name .. ">") or "<userdata>"
  end
end

---------------------------------------------------------------------------------------------------
-- Tables

-- The `k` smallest items of `list` (numbers or strings), sorted. Sorting a million keys to show
-- a hundred is slow, so big lists go through a bounded max-heap instead.
local function smallest(list, k)
  local n = #list
  if k == 0 then return {} end
  if n <= 4 * k + 64 then sort(list); return list end
  local heap = {}
  local function sift(i) -- restore the max-heap property below i
    local x = heap[i]
    while true do
      local c = 2 * i
      if c > k then break end
      if c < k and heap[c] < heap[c + 1] then c = c + 1 end
      if not (x < heap[c]) then break end
      heap[i] = heap[c]; i = c
    end
    heap[i] = x
  end
  for i = 1, k do heap[i] = list[i] end
  for i = k // 2, 1, -1 do sift(i) end
  for i = k + 1, n do
    local x = list[i]
    if x < heap[1] then heap[1] = x; sift(1) end
  end
  sort(heap)
  return heap
end

local TYPE_ORDER = { boolean = 1, ["function"] = 2, table = 3, thread = 4, userdata = 5 }

-- The entries of `t` in display order, cached per table: { keys = {...}, alen = number of array
-- items shown, shown = total shown, more = entries left out }. Array items have no key.
local function entries(st, t)
  local e = st.entries[t]
  if e then return e end
  local n = 1
  while rawget(t, n) ~= nil do n = n + 1 end
  local alen = n - 1
  -- Group the other keys by kind so that most sorting uses the fast built-in comparison.
  local nums, strs, others = {}, {}, {}
  for k in next, t do
    local tk = type(k)
    if tk == "number" then
      if not (math_type(k) == "integer" and k >= 1 and k <= alen) then nums[#nums + 1] = k end
    elseif tk == "string" then strs[#strs + 1] = k
    else others[#others + 1] = k end
  end
  local total = alen + #nums + #strs + #others
  local limit = st.length
  local keys = {}
  if limit > alen then
    local need = limit - alen -- at most this many keys are shown
    nums = smallest(nums, need)
    strs = smallest(strs, need < #nums and 0 or need - #nums)
    local order = {}
    for i, k in ipairs(others) do order[k] = i end
    sort(others, function(a, b) -- by type, false before true, else in next() order
      local ta, tb = TYPE_ORDER[type(a)], TYPE_ORDER[type(b)]
      if ta ~= tb then return ta < tb end
      if ta == 1 and a ~= b then return b end
      return order[a] < order[b]
    end)
    for _, list in ipairs({ nums, strs, others }) do
      for _, k in ipairs(list) do
        if alen + #keys >= limit then break end
        keys[#keys + 1] = k
      end
    end
  end
  local shown_array = alen < limit and alen or limit
  e = { keys = keys, alen = shown_array, shown = shown_array + #keys }
  e.more = total - e.shown
  st.entries[t] = e
  return e
end

-- The pre-pass: walks exactly what the rendering will expand, in the same order, counting how
-- often each table is reached (outside cycles) so that shared tables can get ids.
local function scan(st, v, level)
  v = record_of(st, v)
  if type(v) ~= "table" or st.path[v] or meta_of(st, v) and meta_of(st, v).text
    or level >= st.depth then return end
  local c = st.count[v]
  st.count[v] = (c or 0) + 1
  if c then return end
  st.path[v] = true
  local e = entries(st, v)
  for i = 1, e.alen do scan(st, rawget(v, i), level + 1) end
  for _, k in ipairs(e.keys) do scan(st, k, level + 1); scan(st, rawget(v, k), level + 1) end
  st.path[v] = nil
end

-- The short form of a table that needs no expansion, or nil when it must be expanded.
-- The second result is the label prefix (`<1>`, `<Name>`) for an expansion.
local function table_atom(st, t, level)
  if st.path[t] then return "<cycle>" end
  local m = meta_of(st, t)
  if m and m.text then return m.text end
  local label = m and "<" .. m.name .. ">" or st.labels[t] or ""
  if level >= st.depth then return next(t) == nil and label .. "{}" or label .. "{...}" end
  local id = st.ids[t]
  if id then return "<" .. (m and m.name or "table") .. " " .. id .. ">" end
  if (st.count[t] or 0) > 1 then -- shared: this first rendering gets the id
    id = st.nextid
    st.nextid, st.ids[t], st.idorder[id] = id + 1, id, t
    label = "<" .. id .. ">" .. label
  end
  return nil, label
end

local function key_prefix(st, k, level, budget, flat)
  if is_identifier(k) then return k .. " = " end
  local s = flat(st, k, level, budget - 5)
  return s and "[" .. s .. "] = "
end

-- One-line rendering of `v` in at most `budget` columns, or nil if it does not fit (the caller
-- undoes the ids it assigned). Bounded work: it gives up as soon as the budget is spent.
local function flat(st, v, level, budget)
  v = record_of(st, v)
  if type(v) ~= "table" then
    if type(v) == "string" and (#v < st.string and #v or st.string) + 2 > budget then return nil end
    local s = atom(st, v)
    if #s > budget or sfind(s, "\n", 1, true) then return nil end
    return s
  end
  local short, label = table_atom(st, v, level)
  if short then
    if #short > budget or sfind(short, "\n", 1, true) then return nil end
    return short
  end
  local e = entries(st, v)
  if e.shown == 0 and e.more == 0 then return label .. "{}" end
  st.path[v] = true
  local parts, used = { label .. "{ " }, #label + 4
  local function add(s)
    if not s then return false end
    used = used + #s + 2
    parts[#parts + 1] = s
    return used <= budget
  end
  local ok = true
  for i = 1, e.alen do
    ok = add(flat(st, rawget(v, i), level + 1, budget - used))
    if not ok then break end
  end
  if ok then
    for _, k in ipairs(e.keys) do
      local kp = key_prefix(st, k, level + 1, budget - used, flat)
      local s = kp and flat(st, rawget(v, k), level + 1, budget - used - #kp)
      ok = add(s and kp .. s)
      if not ok then break end
    end
  end
  if ok and e.more > 0 then ok = add("... (" .. e.more .. " more)") end
  st.path[v] = nil
  if not ok then return nil end
  return concat(parts, ", ", 1, 1) .. concat(parts, ", ", 2) .. " }"
end

local function try_flat(st, v, level, budget)
  local mark = st.nextid
  local s = flat(st, v, level, budget)
  if not s then -- roll back the ids the failed attempt handed out
    for id = mark, st.nextid - 1 do st.ids[st.idorder[id]] = nil end
    st.nextid = mark
  end
  return s
end

-- Renders `v` into st.buf; `col` is the column where it starts (for the one-line check).
local function render(st, v, level, col)
  v = record_of(st, v)
  local buf = st.buf
  local s = try_flat(st, v, level, st.width - col)
  if s then buf[#buf + 1] = s; return end
  if type(v) ~= "table" then buf[#buf + 1] = atom(st, v); return end
  local short, label = table_atom(st, v, level)
  if short then buf[#buf + 1] = short; return end
  local e = entries(st, v)
  local inner = st.newline .. srep(st.indent, level + 1)
  local icol = #st.indent * (level + 1)
  st.path[v] = true
  buf[#buf + 1] = label .. "{"
  local count = 0
  local function sep()
    count = count + 1
    buf[#buf + 1] = count > 1 and "," .. inner or inner
  end
  local packed -- column reached on the current line of packed short array items, if any
  for i = 1, e.alen do
    local item = rawget(v, i)
    local s = type(item) ~= "table" and try_flat(st, item, level + 1, PACK_WIDTH)
    if s and packed and packed + 2 + #s <= st.width then -- short atoms share lines: 1, 2, 3, ...
      count = count + 1
      buf[#buf + 1] = ", " .. s
      packed = packed + 2 + #s
    elseif s then
      sep(); buf[#buf + 1] = s
      packed = icol + #s
    else
      packed = nil
      sep(); render(st, item, level + 1, icol)
    end
  end
  for _, k in ipairs(e.keys) do
    sep()
    if is_identifier(k) then
      buf[#buf + 1] = k .. " = "
      render(st, rawget(v, k), level + 1, icol + #k + 3)
    else
      buf[#buf + 1] = "["
      render(st, k, level + 1, icol + 1)
      buf[#buf + 1] = "] = "
      render(st, rawget(v, k), level + 1, icol + 8)
    end
  end
  if e.more > 0 then sep(); buf[#buf + 1] = "... (" .. e.more .. " more)" end
  buf[#buf + 1] = st.newline .. srep(st.indent, level) .. "}"
  st.path[v] = nil
end

---------------------------------------------------------------------------------------------------
-- Entry point

local defaults = { depth = 4, length = 100, string = 10000, indent = 2, newline = "\n", width = 72 }

-- Reads one option (falling back to inspect.defaults); malformed options raise at the caller.
local function option(opts, name, check, want)
  local v = opts and opts[name]
  if v == nil then v = defaults[name] end
  if not check(v) then
    error("inspect: opts." .. name .. " must be " .. want .. ", got "
      .. (type(v) == "number" and format_number(v) or type(v)), 3)
  end
  return v
end

local function is_count(v) return type(v) == "number" and v >= 0 end -- math.huge allowed
local function is_indent(v)
  return type(v) == "string" or type(v) == "number" and v >= 0 and v <= 80
end
local function is_string(v) return type(v) == "string" end

local function inspect(_, v, opts, ...) -- the module table's __call
  -- A third argument is dropped by nothing else: said as the host's functions say it.
  for i = 1, select("#", ...) do
    if select(i, ...) ~= nil then
      error("inspect(value[, opts]): argument #" .. (2 + i) .. " is one too many (it takes a value and opts (optional))", 2)
    end
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("inspect: opts must be a table, got " .. type(opts), 2)
  end
  -- The host's one rule for option tables: an unknown key is an error listing the options.
  for key in next, opts or defaults do
    if defaults[key] == nil then
      local names = { "depth", "indent", "length", "newline", "string", "width" }
      local closest = resembles and type(key) == "string" and resembles(key, names)
      error("inspect: unknown option '" .. tostring(key) .. "' (options: " .. concat(names, ", ")
        .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
    end
  end
  local indent = option(opts, "indent", is_indent, "a number of spaces (0-80) or a string")
  local count = "a number >= 0"
  local st = {
    depth = option(opts, "depth", is_count, count), length = option(opts, "length", is_count, count),
    string = option(opts, "string", is_count, count), width = option(opts, "width", is_count, count),
    newline = option(opts, "newline", is_string, "a string"),
    indent = type(indent) == "number" and srep(" ", indent // 1) or indent,
    buf = {}, meta = {}, entries = {}, path = {}, count = {}, ids = {}, idorder = {}, nextid = 1,
    records = {}, labels = {},
  }
  if st.depth > MAX_NESTING then st.depth = MAX_NESTING end
  local ok, result = pcall(function()
    scan(st, v, 0)
    render(st, v, 0, 0)
    return concat(st.buf)
  end)
  if ok then return result end
  -- Last resort (out of memory, or a bug): still answer with something true about the value.
  return "<" .. type(v) .. ": inspect failed: " .. (type(result) == "string" and result or type(result)) .. ">"
end

return setmetatable({ defaults = defaults }, { __call = inspect })

-- controllers_keys.lua: keys (self:key, the default keys, app.press), the `?` help and
-- help(controller) (part of controllers.lua, loaded by it with its host primitives `P` and shared
-- internals `C`).
local P, C = ...
local type, error, rawget, tostring, select, ipairs, next, getmetatable =
  type, error, rawget, tostring, select, ipairs, next, getmetatable
local concat, sort = table.concat, table.sort
local Controller, state, stack = C.Controller, C.state, C.stack
local isClass, nameOf, tooMany, noMethod, call, scopeOf, callerPlace =
  C.isClass, C.nameOf, C.tooMany, C.noMethod, C.call, C.scopeOf, C.callerPlace
local LIFECYCLE, isStep, present = C.LIFECYCLE, C.isStep, C.present
local commandList, queueCommand, runCommands, onInstance = C.commandList, C.queueCommand, C.runCommands, C.onInstance

-- Keys: self:key binds one to a method; the rest have defaults (DESIGN.md "Interaction on a
-- terminal"). Keys wait in the same queue as commands, so `app.press("a")` then `app.send("quit")`
-- runs in that order.

local isNamedKey = {}
for _, name in ipairs(P.keyNames) do isNamedKey[name] = true end
local KEY_NAMES = "a character (a, A, 1, ?), ctrl-a…ctrl-z, alt-<character>, " .. concat(P.keyNames, ", ")

-- Whether `key` names a key: a word from keyNames, ctrl- and a letter, or one printable
-- character (alone or after alt-).
local function isKeyName(key)
  if type(key) ~= "string" then return false end
  if isNamedKey[key] or key:match("^ctrl%-[a-z]$") then return true end
  local character = key:match("^alt%-(.+)$") or key
  return utf8.len(character) == 1 and not character:match("^[%c ]$")
end

-- A name that is no key as an error shows it: cut after 32 bytes (at a character's start) and
-- with control characters and bytes that are not UTF-8 escaped (`\0`, `\255`), so a huge or
-- binary name cannot flood the terminal or write a raw control byte to it.
local SHOWN_KEY_BYTES = 32
local function shownKey(key)
  local length = #key
  local cut = length > SHOWN_KEY_BYTES
  if cut then
    local stop = SHOWN_KEY_BYTES
    while stop > 1 and (key:byte(stop + 1) or 0) & 0xC0 == 0x80 do stop = stop - 1 end
    key = key:sub(1, stop)
  end
  local pattern = utf8.len(key) and "[%c\\]" or "[%c\\\128-\255]"
  key = key:gsub(pattern, function(byte) return byte == "\\" and "\\\\" or "\\" .. byte:byte() end)
  return "'" .. key .. (cut and "…' (" .. length .. " bytes)" or "'")
end

-- Raises, at `level` above the caller, the error for a name that is no key.
-- The key a name that is none most likely means: another case (Enter), another way of writing
-- ctrl (ctl-r, ctrl+r, C-r, control-r), or a close name (entr).
-- The names other programs give some keys (curses, browsers' key names, vim): closeness alone
-- missed them (return, escape) or sent them elsewhere (pgdown to down).
local KEY_ALIASES = {
  ["return"] = "enter", cr = "enter", escape = "esc", del = "delete", ins = "insert", bs = "backspace",
  pgdown = "pagedown", pgdn = "pagedown", ["page-down"] = "pagedown", pgup = "pageup", ["page-up"] = "pageup",
  arrowup = "up", arrowdown = "down", arrowleft = "left", arrowright = "right", backtab = "shift-tab",
}
local function closestKey(key)
  local lower = key:lower()
  if isKeyName(lower) then return lower end
  local alias = KEY_ALIASES[lower]
  if alias and isKeyName(alias) then return alias end
  local letter = lower:match("^ctr?l?[%-%+_ ](%a)$") or lower:match("^c%-(%a)$") or lower:match("^control[%-%+_ ]?(%a)$")
    or lower:match("^%^(%a)$")
  if letter then return "ctrl-" .. letter end
  -- shift-r: a shifted letter is its capital, a character of its own.
  local shifted = lower:match("^shift[%-%+_ ](%a)$")
  if shifted then return shifted:upper() end
  return P.resembles(lower, P.keyNames)
end

-- "down enter" or "rr" given as one key: the keys it holds, when each word (or, with no space,
-- each character) is a key; nil otherwise.
local function heldKeys(key, closest)
  local keys = {}
  if key:find("%s") then
    for word in key:gmatch("%S+") do keys[#keys + 1] = word end
  elseif not closest and (utf8.len(key) or 0) > 1 then
    for _, code in utf8.codes(key) do keys[#keys + 1] = utf8.char(code) end
  end
  if #keys < 2 then return nil end
  for _, held in ipairs(keys) do if not isKeyName(held) then return nil end end
  return keys
end

-- `several`: the caller takes several keys (press, app.press, a remote `key`), so a string that
-- holds several is told how to give them.
local function checkKey(key, caller, position, level, several)
  if isKeyName(key) then return end
  local shown, hint
  if type(key) == "string" then
    shown = shownKey(key)
    local closest = closestKey(key)
    local held = several and heldKeys(key, closest)
    if held then
      local quoted = {}
      for i, one in ipairs(held) do quoted[i] = string.format("%q", one) end
      hint = caller == "key" and "; give each key as its own word: crescent send --key " .. concat(held, " ")
        or "; give each key as its own argument: " .. caller .. "(" .. concat(quoted, ", ") .. ")"
    else
      hint = closest and "; did you mean '" .. closest .. "'?" or ""
    end
  elseif type(key) == "number" then
    -- self:key(1, ...): the key 1 is the string "1".
    shown, hint = tostring(key) .. " (a number)", "; a key name is a string: write \"" .. tostring(key) .. "\" for that key"
  else
    shown, hint = "(a " .. type(key) .. ")", ""
  end
  error("bad argument #" .. position .. " to '" .. caller .. "' (unknown key " .. shown .. hint .. "; key names are " .. KEY_NAMES .. ")", level + 1)
end

function Controller:key(key, method, help)
  onInstance(self, "self:key(key, method[, help])", "self:key(...)")
  checkKey(key, "key", 1, 2)
  if key == "ctrl-c" then error("bad argument #1 to 'key' (ctrl-c always quits, so it cannot be bound; choose another key)", 2) end
  if type(method) ~= "string" then
    error("self:key(key, method[, help]): argument #2 must be the name of a method of " .. nameOf(self)
      .. " that the key runs, got " .. type(method) .. " (as self:key(\"" .. key .. "\", \"refresh\"))", 2)
  end
  if type(self[method]) ~= "function" then error("key '" .. key .. "': " .. noMethod(self, method), 2) end
  if help ~= nil and type(help) ~= "string" then error("bad argument #3 to 'key' (help string expected, got " .. type(help) .. ")", 2) end
  local st = state[self]
  local place = callerPlace(2)
  local bound = st.keys[key]
  if not bound then st.keyOrder[#st.keyOrder + 1] = key end
  -- Bound again: the second replaces the first without a word otherwise. The same binding made
  -- again by the same line (in viewWillAppear) is no mistake.
  local same = bound and bound.place == place and bound.method == method and bound.help == (help or method)
  if bound and not same and place ~= "" and bound.place ~= "" then
    P.warn("warning: " .. place .. "self:key(\"" .. key .. "\", \"" .. method .. "\") binds '" .. key .. "' again, replacing its binding to '"
      .. bound.method .. "' made at " .. bound.place:sub(1, -3) .. ": bind each key once, or another key")
  end
  st.keys[key] = { method = method, help = help or method, place = place }
  if stack[#stack] == self then present() end
end

-- The keys of `self` with their help, its own first, then the defaults it does not override.
local function keyEntries(self)
  local st = state[self]
  local entries = {}
  for _, key in ipairs(st.keyOrder) do entries[#entries + 1] = { key, st.keys[key].help } end
  local function default(key, help) if not st.keys[key] then entries[#entries + 1] = { key, help } end end
  if #stack > 1 then default("esc", "back") end
  default("?", "help")
  default("q", "quit")
  entries[#entries + 1] = { "ctrl-c", "quit" }
  return entries
end

-- The status line's hints: each key with its help, whole (the status line cuts what does not fit).
local function keyHints(self)
  local hints = {}
  for _, entry in ipairs(keyEntries(self)) do
    local key, help = entry[1], entry[2]
    if key ~= "ctrl-c" then hints[#hints + 1] = key .. " " .. help end
  end
  return concat(hints, "  ")
end

local function helpText(self)
  local lines = { "keys of " .. nameOf(self) .. ":" }
  local entries = keyEntries(self)
  local width = 0
  for _, entry in ipairs(entries) do width = math.max(width, #entry[1]) end
  for _, entry in ipairs(entries) do
    lines[#lines + 1] = "  " .. entry[1] .. string.rep(" ", width - #entry[1] + 2) .. entry[2]
  end
  lines[#lines + 1] = "commands (after ':'):"
  lines[#lines + 1] = commandList(self)
  return concat(lines, "\n")
end

-- help(Controller) and help(self): the class's methods and lifecycle steps, and for an instance
-- that has loaded, its keys and commands (the `?` text). Other values go to the host's help.
local function controllerHelp(value)
  local class = isClass(value) and value or getmetatable(value)
  local methods, steps = {}, {}
  local seen = {}
  local c = class
  while c ~= nil do
    for key, v in next, c do
      if type(key) == "string" and type(v) == "function" and key:sub(1, 2) ~= "__" and not seen[key] then
        seen[key] = true
        if isStep[key] then steps[#steps + 1] = key else methods[#methods + 1] = key end
      end
    end
    c = rawget(c, "__base")
  end
  sort(methods)
  local ordered = {}
  for _, step in ipairs(LIFECYCLE) do if seen[step] and isStep[step] then ordered[#ordered + 1] = step end end
  local lines = { "controller " .. nameOf(value) .. (isClass(value) and "" or " (" .. tostring(value) .. ")") }
  lines[#lines + 1] = "lifecycle steps it has: " .. (#ordered > 0 and concat(ordered, ", ") or "none") .. " (of " .. concat(LIFECYCLE, ", ") .. ")"
  lines[#lines + 1] = "methods: " .. (#methods > 0 and concat(methods, ", ") or "none")
  if isClass(value) or not state[value] or not state[value].loaded then
    lines[#lines + 1] = "keys and commands are bound by self:key and self:command when an instance loads; help(app.top) lists those of the top controller"
  else
    lines[#lines + 1] = helpText(value)
  end
  return concat(lines, "\n")
end

local help_ = help
if type(help_) == "function" then
  function help(...)
    local value = ...
    -- Here, so that the error names the script's line, not this wrapper's.
    tooMany("help([topic])", "a topic (optional)", 1, select(2, ...))
    if isClass(value) or (type(value) == "table" and state[value] ~= nil) then return print(controllerHelp(value)) end
    return help_(...)   -- as given: help() is the overview, help(nil) a name that reads nil
  end
end

-- `remote` is the table of a remote client's `key` request, shared by its keys, or nil.
local function dispatchKey(key, done, where, remote)
  if key == "ctrl-c" then
    done(true)
    return P.quit(130)
  end
  local top = stack[#stack]
  local binding = top and state[top].keys[key]
  -- ctrl-z suspends wherever it comes: over the help (there again after fg) as with the command
  -- line open (its text kept).
  if key == "ctrl-z" and not binding then
    P.suspend()
    return done(true)
  end
  -- A key that waited behind the handler that opened the command line (groceries' `a` types
  -- "add "; `a d d enter` in one read must add "dd", not delete the selected item) is typed
  -- into the line, as it would have been had it come a moment later. A remote key acts as the
  -- person's would, between their keys: the line the person has open is theirs (a remote `q`
  -- quits, a remote letter is no text in their half-typed command, a remote esc does not close
  -- it); only a line a key of the same request opened takes the request's next keys.
  if (not remote or remote.ownsLine) and P.typeIntoCommandLine(key) then return done(true) end
  -- While the help is shown a key scrolls it or closes it, and does nothing else.
  if P.helpKey(key) then return done(true) end
  if binding then
    P.setScope(scopeOf(top))
    local ok, err = call(top, binding.method, key)
    P.setScope(P.scriptScope)
    return done(ok, not ok and "error in " .. nameOf(top) .. ":" .. binding.method .. ": " .. tostring(err) or nil)
  end
  if key == "q" then
    done(true)
    return P.quit(0)
  elseif (key == "esc" or key == "backspace") and #stack > 1 then
    app.pop()
  elseif key == "?" and top then
    P.showHelp(helpText(top))
  elseif key == "ctrl-l" then
    P.redraw()
  elseif top then
    -- Selection and focus in the top controller's view: a move tells selectionChanged, enter
    -- tells didSelect (UITableViewDelegate's didSelectRowAt).
    -- The row is converted only for a controller that has a method to hear of it.
    local hears = type(top.selectionChanged) == "function" or type(top.didSelect) == "function"
    local action, id, index, item = P.selectionKey(key, hears)
    local method = action == "moved" and "selectionChanged" or action == "chosen" and "didSelect" or nil
    if method and type(top[method]) == "function" then
      P.setScope(scopeOf(top))
      local ok, err = call(top, method, id, index, item)
      P.setScope(P.scriptScope)
      return done(ok, not ok and "error in " .. nameOf(top) .. ":" .. method .. ": " .. tostring(err) or nil)
    end
    -- A letter the controller does not bind did nothing and showed nothing.
    if action == nil and #key == 1 and key:match("%g") then
      P.showMessage("no key '" .. key .. "' in " .. nameOf(top) .. " (? lists the keys)")
    end
  elseif where then
    -- app.press with nothing shown: the key reaches no one.
    P.warn("warning: " .. where .. "app.press: no controller to receive key '" .. key .. "' (app.push(Controller) shows one that takes keys)")
  end
  done(true)
end

-- A selection changed by a click: the top controller's selectionChanged(id, index, item).
local function dispatchChange(change, done)
  local top = stack[#stack]
  if not top or type(top.selectionChanged) ~= "function" then return done(true) end
  P.setScope(scopeOf(top))
  local ok, err = call(top, "selectionChanged", change[1], change[2], change[3])
  P.setScope(P.scriptScope)
  done(ok, not ok and "error in " .. nameOf(top) .. ":selectionChanged: " .. tostring(err) or nil)
end

-- The keys are packed once: `select(i, ...)` in a loop would copy the rest of them each time.
-- `remote`: a table for a remote client's request, nil for the terminal's keys and a script's.
local function sendKeys(done, caller, remote, ...)
  local keys = table.pack(...)
  local count = keys.n
  for i = 1, count do checkKey(keys[i], caller, i, 3, true) end
  -- Keys a script presses are said to reach no one at its line; a remote client hears it from done.
  local where = (caller == "app.press" or caller == "press") and callerPlace(3) or nil
  for i = 1, count do
    queueCommand({ key = keys[i], done = i == count and done or nil, where = where, remote = remote })
  end
  runCommands()
  return true
end

-- Opens the terminal's `:` command line with `text` typed (a key that starts a command the
-- person finishes: `a` typing "add "); false where there is no terminal.
function app.commandLine(text)
  if text ~= nil and type(text) ~= "string" then error("bad argument #1 to 'app.commandLine' (string expected, got " .. type(text) .. ")", 2) end
  return P.openCommandLine(text or "")
end

function app.press(...)
  if select("#", ...) == 0 then error("bad argument #1 to 'app.press' (a key name expected, e.g. app.press(\"down\", \"enter\"))", 2) end
  -- Not a tail call: sendKeys names a wrong key at the level of app.press's caller.
  local sent = sendKeys(nil, "app.press", nil, ...)
  return sent
end

C.keyHints, C.dispatchKey, C.dispatchChange = keyHints, dispatchKey, dispatchChange

return {
  -- For the terminal's command line: whether the top controller binds `key`, has keys at all.
  bindsKey = function(key)
    local top = stack[#stack]
    return top ~= nil and state[top].keys[key] ~= nil
  end,
  hasKeys = function()
    local top = stack[#stack]
    return top ~= nil and #state[top].keyOrder > 0
  end,
  -- Keys from the terminal: names no binding can use (ctrl-up) are dropped.
  terminalKeys = function(...)
    local keys = {}
    for i = 1, select("#", ...) do
      local key = select(i, ...)
      if isKeyName(key) then keys[#keys + 1] = key end
    end
    if #keys > 0 then sendKeys(nil, "key", nil, table.unpack(keys)) end
  end,
  -- A spec's press(...), tail-called: app.press under the name the spec called, so a wrong key
  -- is named as an argument of press at the spec's line; then `settle()` (the spec host's: runs
  -- the loop until only the clock holds work), so press returns once its keys, and the commands
  -- queued before them, have been handled, as a terminal's key is before the next is read.
  pressAs = function(caller, settle, ...)
    local sent = sendKeys(nil, caller, nil, ...)
    settle()
    return sent
  end,
  -- The keys a terminal (or the remote `key` method) pressed, in order; report(token, ok,
  -- message) once the last has been handled. Unknown names raise, naming the key and the valid names.
  pressKeys = function(report, token, ...)
    -- The default ctrl-z stops the host's whole process (SIGTSTP): the client would wait for an
    -- answer only the person at the terminal can bring back with `fg`. Refused unless the top
    -- controller binds ctrl-z itself.
    for i = 1, select("#", ...) do
      if select(i, ...) == "ctrl-z" then
        local top = stack[#stack]
        if not (top and state[top].keys["ctrl-z"]) then
          error("ctrl-z is not pressed from a remote client: it would suspend the host's process, which only the person at its terminal can resume (fg)", 0)
        end
      end
    end
    return sendKeys(function(ok, message) report(token, ok, message) end, "key", {}, ...)
  end,
}

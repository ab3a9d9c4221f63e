-- testing_app.lua: what a spec drives and reads of the app under test (part of `crescent test`'s
-- API, DESIGN.md "Testing scripts"): the virtual clock, os.exit and os.execute under the runner,
-- script/send/press, view_text/screen_text/view_json and assert.view's golden files. Loaded by the
-- spec file's host after testing.lua, with the host's testing primitives (T), the run's options
-- and what assertions.lua returned.
local T, options, assertions = ...
local where, show, fail = assertions.where, assertions.show, assertions.fail
local type, pairs, tostring, select, error, setmetatable, rawset = type, pairs, tostring, select, error, setmetatable, rawset
local sformat, concat, pack, mathtype = string.format, table.concat, table.pack, math.type

---------------------------------------------------------------------------------------------------
-- Time

clock = {
  advance = function(seconds)
    if rawequal(seconds, clock) then error(assertions.callWith("clock.advance", ".", "clock.advance(seconds)"), 2) end
    if type(seconds) ~= "number" or seconds ~= seconds or seconds < 0 then
      error("bad argument #1 to 'clock.advance' (seconds >= 0 expected, got " .. show(seconds) .. ")", 2)
    end
    T.advance(seconds)
  end,
  run = T.run,
  now = function() return T.now() end,
}
-- `clock.advanc(1)` names the functions there are, not Lua's "attempt to call a nil value".
setmetatable(clock, { __index = function(_, key)
  local names = { "advance", "now", "run" }
  local closest = type(key) == "string" and T.closest(key, names)
  error("no function 'clock." .. tostring(key) .. "' (clock: " .. table.concat(names, ", ") .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
end })

-- os.exit would end the whole run (and with it the report): under `crescent test` it ends only the
-- running test, which fails.
os.exit = T.exit

-- A Ctrl-C that reached only os.execute's program (os.execute ignores SIGINT in its caller while
-- the program runs, as C's system does) stops the run as it would have, seen in its wait status.
local execute = os.execute
os.execute = function(...)
  local ok, how, code = execute(...)
  if how == "signal" then T.programSignal(code) end
  return ok, how, code
end

---------------------------------------------------------------------------------------------------
-- Scripts and controllers

function script(path, ...)
  if type(path) ~= "string" then error("bad argument #1 to 'script' (a path expected, got " .. type(path) .. ")", 2) end
  local chunk, err = loadfile(path)
  if not chunk then
    local near = T.nearFile(path)
    error("script: " .. err .. (near and "; did you mean '" .. near .. "'?" or ""), 2)
  end
  T.scriptFolder(path)
  local args = pack(...)
  local argt = { [-1] = "crescent", [0] = path }
  for i = 1, args.n do argt[i] = args[i] end
  arg = argt
  for i = #app.args, 1, -1 do app.args[i] = nil end
  for i = 1, args.n do app.args[i] = args[i] end
  return chunk(...)
end

-- send(command, ...): as app.send, but an unknown command or a wrong argument fails the test at the
-- spec's line (app.send only warns, as stdin does). An error in the command's method is reported
-- as any handler's error; a command that waits is judged when it runs, so only its start is seen.
function send(command, ...)
  local hooks = T.controllerHooks()
  if type(command) ~= "string" or type(hooks) ~= "table" then return app.send(command, ...) end
  local refused
  hooks.sendCommand(function(_, ok, message)
    if not ok and type(message) == "string" and not message:find("^error in ") and not message:find("^the command did not finish") then
      refused = message
    end
  end, 0, command, ...)
  if refused then error("send: " .. refused, 2) end
  return true
end
-- press(...): as app.press, returning once the keys (and the commands queued before them) have
-- been handled, so a component's `selected` agrees with screen_text(). A `q` the top controller does not bind quits the app as a person's
-- would; noted first, so the failure names the spec's own key, not the code under test.
function press(...)
  if select("#", ...) == 0 then error("bad argument #1 to 'press' (a key name expected, e.g. press(\"down\", \"enter\"))", 2) end
  local hooks = T.controllerHooks()
  -- A key with nothing shown reaches no one: the test would check nothing (app.press warns).
  if type(hooks) == "table" and select("#", ...) > 0 and not hooks.hasController() then
    error("press: no controller is shown to receive the keys (push one with app.push, or run a script that does with "
      .. "script(\"app.lua\"))", 2)
  end
  if type(hooks) == "table" and hooks.hasController() and not hooks.bindsKey("q") then
    for i = 1, select("#", ...) do
      if select(i, ...) == "q" then T.notePressedQuit("press(\"q\") at " .. where(1)) break end
    end
  end
  if type(hooks) == "table" then return hooks.pressAs("press", T.settle, ...) end   -- a tail call: the spec's line
  return app.press(...)
end

---------------------------------------------------------------------------------------------------
-- Views: the top controller's view, as --ui plain and --ui json show it, and the live screen

-- With no controller shown there is no view: an error at the spec's line saying so, where a nil
-- would fail an assertion later as `actual: nil`, saying nothing of why.
local function shown(fn, view)
  if view == nil then
    error(fn .. ": no controller is shown, so there is no view (push one with app.push, or run a script that does "
      .. "with script(\"app.lua\"); app.top is nil while none is)", 3)
  end
  return view
end
-- view_text(5) or view_json("id") took what it was given and showed the whole view anyway.
local function takesNothing(fn, ...)
  for i = 1, select("#", ...) do
    if select(i, ...) ~= nil then
      error(fn .. ": argument #" .. i .. " is one too many (it takes none: it is the whole view of the controller shown)", 3)
    end
  end
end
function view_text(...)
  takesNothing("view_text()", ...)
  local text = shown("view_text()", T.viewText())   -- not a tail call: level 3 is the spec's line
  return text
end
-- The screen a person would see at width x height (default: the run's columns x 24): the view,
-- the `?` help over it, the status line.
function screen_text(width, height)
  local text, err = T.screenText(width, height)
  if err then error("screen_text(width, height): " .. err, 2) end
  return text
end
function view_json(...)
  takesNothing("view_json()", ...)
  return json.decode(shown("view_json()", T.viewJSON()))
end

local function readfile(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

local function linediff(expected, actual)
  local e, a = {}, {}
  for line in (expected .. "\n"):gmatch("(.-)\n") do e[#e + 1] = line end
  for line in (actual .. "\n"):gmatch("(.-)\n") do a[#a + 1] = line end
  local lines = {}
  for i = 1, math.max(#e, #a) do
    if e[i] ~= a[i] then
      if e[i] then lines[#lines + 1] = sformat("  -%3d| %s", i, e[i]) end
      if a[i] then lines[#lines + 1] = sformat("  +%3d| %s", i, a[i]) end
    end
  end
  return concat(lines, "\n")
end

-- assert.view(golden[, message]) compares the view as view_text() renders it;
-- assert.view(golden, { width = W, height = H }[, message]) the live screen as screen_text(W, H)
-- shows it (title line, selection, status line), as a person sees it.
rawset(assert, "view", function(golden, screen, message)
  if type(golden) ~= "string" then fail("assert.view needs the path of a golden file, got " .. show(golden)) end
  if type(screen) ~= "table" then screen, message = nil, screen end
  local actual
  if screen then
    -- A misspelled size (`widht`) is named with the closest, not only as a missing width.
    for key in pairs(screen) do
      if key ~= "width" and key ~= "height" then
        local closest = type(key) == "string" and T.closest(key, { "height", "width" })
        fail("assert.view(golden, screen): unknown key '" .. tostring(key) .. "' in screen (keys: height, width"
          .. (closest and "; did you mean '" .. closest .. "'?" or "") .. "), as { width = 80, height = 12 }")
      end
    end
    if mathtype(screen.width) ~= "integer" or mathtype(screen.height) ~= "integer" then
      fail("assert.view(golden, screen): screen needs integer width and height, as { width = 80, height = 12 }, got " .. show(screen))
    end
    local err
    if T.viewText() then actual, err = T.screenText(screen.width, screen.height) end
    if err then fail("assert.view(golden, screen): " .. err) end
  else
    actual = T.viewText()
  end
  if actual == nil then fail("assert.view: no controller is shown (push one, or run a script that does)") end
  actual = actual .. "\n"
  local refusal = T.goldenRefusal(golden, false)
  if refusal then fail("assert.view: " .. refusal) end
  local expected = readfile(golden)
  if options.update then
    if expected ~= actual then
      refusal = T.goldenRefusal(golden, true)
      if refusal then fail("assert.view: " .. refusal) end
      local f, err = io.open(golden, "wb")
      if not f then
        local hint, folder = T.goldenHint(golden)
        fail("assert.view: cannot write " .. golden .. ": " .. tostring(err)
          .. (folder and " (its folder " .. folder .. " does not exist: create it, or correct the path)" or "")
          .. (hint ~= "" and "; " .. hint or ""))
      end
      f:write(actual)
      f:close()
      T.noteUpdated(golden)
    end
    return
  end
  if expected == nil then
    -- Where the path was read from, and the file most likely meant: `--update` would write a
    -- second golden file under a misspelled name, and cannot write into a folder that is missing.
    local hint, folder = T.goldenHint(golden)
    hint = hint ~= "" and " (" .. hint .. ")" or ""
    if folder then
      fail(sformat("assert.view: the golden file %s does not exist, nor its folder %s%s; correct the path, or create the folder "
        .. "and run `crescent test --update` to write the file from this view:\n%s", golden, folder, hint, actual))
    end
    fail(sformat("assert.view: the golden file %s does not exist%s; run `crescent test --update` to write it from this view:\n%s",
      golden, hint, actual))
  end
  if expected ~= actual then
    fail(sformat("%s: the %s differs from %s (- expected, + actual; `crescent test --update` rewrites it)\n%s",
      message or "assert.view", screen and "screen" or "view", golden, linediff(expected, actual)))
  end
end)

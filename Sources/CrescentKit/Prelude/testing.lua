-- testing.lua: the API of `crescent test` (busted's names, DESIGN.md "Testing scripts"), loaded in
-- the host of each spec file after the other prelude modules. The chunk takes the host's testing
-- primitives (T, a private table), options ({ update, filter, tags, exclude_tags }) and what
-- assertions.lua, doubles.lua, fakes.lua and environments.lua returned; it defines the blocks and
-- tests (describe/it, the hooks, pending, finally, tags and filters) and returns the runner the
-- Swift side drives: file(chunk) runs the spec file, next() walks it to its next test, run(i) runs
-- that test. What a spec drives and reads of the app (clock, script, send, press, view_text,
-- screen_text, assert.view) is testing_app.lua, loaded after it.
--
-- A spec file runs in one Lua state, as under busted: its chunk and describe bodies run once, in
-- order, and what one test sets in the globals or upvalues the next sees (insulate separates).
-- Between tests the Swift side gives the state a fresh model: services, store, clock, fakes.

local T, options, assertions, doubles, fakes, environments = ...
local where, Failure = assertions.where, assertions.Failure
local type, pairs, ipairs, tostring, error = type, pairs, ipairs, tostring, error
local sformat, concat = string.format, table.concat
local mathtype = math.type
local setupvalue = debug.setupvalue
-- What the runner itself calls, taken now: a test may replace the library's functions (busted's
-- specs patch coroutine.resume or string.find to test code), and the walk must still reach
-- the tests after it.
local cocreate, coresume, costatus, yield = coroutine.create, coroutine.resume, coroutine.status, coroutine.yield
local tinsert, tremove = table.insert, table.remove
local sfind, gmatch = string.find, string.gmatch
local traceback, getregistry = debug.traceback, debug.getregistry
local getmetatable, setmetatable, xpcall, pcall, next, rawget, rawset = getmetatable, setmetatable, xpcall, pcall, next, rawget, rawset
local task, inspect = task, inspect
local enter = environments.enter

-- As busted by default (its `lpath`), a project's `src/` folder is searched first: a library laid
-- out as src/NAME.lua loads by its name.
package.path = "./src/?.lua;./src/?/?.lua;./src/?/init.lua;" .. package.path

-- The runner; the host calls its `http`, `process` and `call` for the code under test (fakes.lua).
local runner = { http = fakes.http, process = fakes.process, call = fakes.call, reset = fakes.reset }
-- Failures noticed outside the test's own code (an unmatched fake.http route, the real network
-- or device reached); they fail the running test even when the code under test handled them.
local noticed = fakes.noticed

---------------------------------------------------------------------------------------------------
-- Blocks and tests
--
-- As under busted, a describe's body runs when the run reaches it, not when it is declared: after
-- the tests declared before it in the enclosing block, so a nested body can use what an outer
-- `setup` (and, through the tests before it, `before_each`) set. An error in a describe's body
-- drops its tests and is reported under the describe's name. Tests are run in that order.

-- A block's own full name is made once.
local function blockname(block)
  if not (block and block.name) then return nil end
  local full = block.fullname
  if not full then
    local parent = blockname(block.parent)
    full = parent and parent .. " " .. block.name or block.name
    block.fullname = full
  end
  return full
end

local function fullname(block, name)
  local prefix = blockname(block)
  return prefix and prefix .. " " .. name or name
end

local function checkname(name, fn, what, level)
  if type(name) ~= "string" then
    error(sformat("bad argument #1 to '%s' (a name string expected, got %s)", what, type(name)), level or 3)
  end
  if fn ~= nil and type(fn) ~= "function" then
    error(sformat("bad argument #2 to '%s' (function expected, got %s)", what, type(fn)), level or 3)
  end
end

-- A block's children are its describes (tables) and its tests, kept flat as cheap as can be (a
-- file of a thousand tests is run once per test): the function, or false for a pending one, with
-- the name and place in `names` and `wheres` at the same index.
-- A block's hooks are kept by kind, with the word the spec declared each with (`strict_setup`,
-- as busted names a hook that fails) and whether it is strict (`strict` is set on the block then).
local function newblock(name, parent, fn)
  return { name = name, parent = parent, fn = fn, children = {}, names = {}, wheres = {}, count = 0,
    setup = {}, teardown = {}, before_each = {}, after_each = {},
    words = { setup = {}, teardown = {}, before_each = {}, after_each = {} }, strictness = { setup = {}, teardown = {} } }
end
local root = newblock(nil, nil, nil)
root.context = environments.new(environments.suite)
local current = root

-- The environment a block's code runs in (environments.lua), made when the run first enters it.
local function contextof(block)
  local context = block.context
  if not context then
    local parent = block.parent
    -- An expose block writes into the environment around its parent's, the suite's at the top.
    local exposesTo = block.exposes and (parent.parent and contextof(parent.parent) or environments.suite)
    context = environments.new(contextof(parent), exposesTo)
    block.context = context
  end
  return context
end
-- What a block's setup runs in: its block's environment (what it assigns lands there), but the
-- model is refused. The model is each test's own (services, store, timers, fakes, controllers):
-- what setup made there would reach only the block's first test and be gone for the next, which
-- no error would say; before_each runs before each test, in that test's model.
local modelnames = { "services", "fake", "timer", "app", "script", "on", "post" }
local function insetup(context)
  local env = setmetatable({}, { __index = context.env })
  for _, name in ipairs(modelnames) do
    -- Only crescent's own: a spec's global of the same name (a busted suite's `post`) is its own.
    local real = rawget(_G, name)
    local function refuse(what)
      error(sformat("setup: %s is the model, and each test gets a fresh one: what setup makes there (records, timers, fakes, "
        .. "controllers) would be gone by the block's second test; make it in before_each, which runs before each test, "
        .. "or keep plain Lua values in setup", what), 3)
    end
    if real ~= nil and context.env[name] == real then
      env[name] = setmetatable({}, {
        __index = function(_, key) refuse(name .. "." .. tostring(key)) end,
        __call = function() refuse(name .. "()") end,
      })
    end
  end
  return { env = env, meta = { __index = env, __newindex = context.meta.__newindex } }
end
-- The test running, while one runs (its `finally`), and the Pending marker `pending()` raises in it.
local running
local Pending = {}
-- True while a test's after_each and teardown hooks run: nothing may be declared there either.
local afterhooks
-- True while a test's own body runs: `finally` belongs there, not in a hook (busted has none there).
local inbody

-- As busted: a test declares nothing; a test or block declared inside one would never run, and
-- the test would pass without it.
local function notinatest(what, level)
  if running or afterhooks then
    error(sformat("'%s' not supported inside a running test (declare it in a describe block or at the top of the file)", what),
      level or 3)
  end
end

local function declareblock(name, fn, what, insulated)
  notinatest(what, 4)
  if mathtype(name) then name = tostring(name) end
  -- A callable table is a body too, as under busted.
  local meta = type(fn) == "table" and getmetatable(fn)
  if meta and type(meta.__call) == "function" then local callable = fn; fn = function(...) return callable(...) end end
  checkname(name, fn, what, 4)
  -- No function: the block fails under its name, saying so (the file's other tests still run).
  if fn == nil then
    local message = sformat("%s: bad argument #2 to '%s' (function expected, got no value)", where(3), what)
    fn = function() error(message, 0) end
  end
  local block = newblock(name, current, fn)
  block.where = where(3)
  block.insulated = insulated
  block.exposes = what == "expose"
  if block.exposes then current.hasexpose = true end
  local n = current.count + 1
  current.count = n
  current.children[n] = block
end

function describe(name, fn) declareblock(name, fn, "describe") end
function context(name, fn) declareblock(name, fn, "context") end
function expose(name, fn) declareblock(name, fn, "expose") end
-- As busted: the globals and package.loaded an insulate block's code sets are undone when the
-- block ends (its own tests see them; the blocks and tests after it do not).
function insulate(name, fn) declareblock(name, fn, "insulate", true) end

local function shallowcopy(t)
  local copy = {}
  for k, v in next, t do copy[k] = v end
  return copy
end

local function restoretable(t, saved)
  for k in next, t do if saved[k] == nil then rawset(t, k, nil) end end
  for k, v in next, saved do if rawget(t, k) ~= v then rawset(t, k, v) end end
end

-- Whether the run chooses tests: by options.filter (Lua patterns on full names), options.tags or
-- options.exclude_tags (`#tag` in them), as busted chooses.
local choosing = options.filter ~= nil or (options.tags and #options.tags > 0) or (options.exclude_tags and #options.exclude_tags > 0)

-- A test is its function (false for a pending one), its name and where it was declared.
local function declare(name, fn)
  local block = current
  local n = block.count + 1
  block.count = n
  block.children[n] = fn or false
  block.names[n] = name
  block.wheres[n] = where(3)
end

function it(name, fn)
  if running or afterhooks then notinatest("it") end
  if type(name) ~= "string" then
    -- As busted, a number names a test too (`it(123, fn)` is "123").
    if mathtype(name) then name = tostring(name) else checkname(name, fn, "it") end
  end
  if fn ~= nil and type(fn) ~= "function" then checkname(name, fn, "it") end
  declare(name, fn)
end
test, spec = it, it

-- busted's randomize() shuffles the block's tests; here they run in the order declared, which is
-- one of the orders busted could pick.
function randomize() end

function pending(name)
  if running then error(setmetatable({ message = name }, Pending), 0) end
  checkname(name, nil, "pending")
  declare(name, nil)
end

-- finally(fn) inside a test: fn runs once the test's body ends, passed or not (busted keeps the last).
function finally(fn)
  if not running then error("finally: call it inside a test (it(\"...\", function() ... finally(fn) end))", 2) end
  if not inbody then
    error("finally: call it in the test's own body, not in a hook: a before_each cleans up in an after_each", 2)
  end
  if type(fn) ~= "function" then error("bad argument #1 to 'finally' (function expected, got " .. type(fn) .. ")", 2) end
  running.finally = fn
end

-- As under busted, `setup` and `teardown` are strict: they run when the run enters and leaves
-- their block, whether or not a test of it runs (a block of pending tests too); the lazy ones run
-- only around the block's tests that run.
local function hook(kind, word, strict)
  return function(fn)
    notinatest(word)
    if type(fn) ~= "function" then error(sformat("bad argument #1 to '%s' (function expected, got %s)", word, type(fn)), 2) end
    local list = current[kind]
    local n = #list + 1
    list[n] = fn
    current.words[kind][n] = word
    if strict then
      current.strictness[kind][n] = true
      current.strict = true
      -- Where busted reports a block's failing strict hook: at the first one.
      if not current.hookwhere then current.hookwhere = where(2) end
    end
  end
end
setup, teardown = hook("setup", "setup", true), hook("teardown", "teardown", true)
before_each, after_each = hook("before_each", "before_each"), hook("after_each", "after_each")
lazy_setup, lazy_teardown = hook("setup", "lazy_setup"), hook("teardown", "lazy_teardown")
strict_setup, strict_teardown = hook("setup", "strict_setup", true), hook("teardown", "strict_teardown", true)

local function chain(block)
  local blocks = {}
  while block do tinsert(blocks, 1, block); block = block.parent end
  return blocks
end

local function hastag(name, tags)
  for _, tag in ipairs(tags or {}) do if sfind(name, "#" .. tag) then return true end end
  return false
end

-- Whether the run takes a test (`choosing` is set above, with `it`): options.filter (Lua
-- patterns on full names, of which one must match, as busted ORs its --filter options),
-- options.tags and options.exclude_tags (`#tag` in them), as busted chooses.
local function filtered(name)
  if options.filter == nil then return true end
  for _, pattern in ipairs(options.filter) do
    if sfind(name, pattern) ~= nil then return true end
  end
  return false
end
local function chosen(name)
  return filtered(name)
    and (options.tags == nil or #options.tags == 0 or hastag(name, options.tags))
    and not hastag(name, options.exclude_tags)
end

-- The tests in run order (and the describes whose bodies failed), expanding describe bodies as
-- the run reaches them, once per file. The walk runs in the file's one Lua state, as busted's
-- does: it yields each entry as it reaches it (runner.next), the runner runs it, and the walk goes
-- on, so a describe body declared after a test runs after that test. A block's teardown hooks run
-- once, when the walk leaves a block one of whose tests ran (blockteardown, below).
local ordered
local blockteardown, strictsetup
-- The spec's code the walk runs (a describe body, a block's teardown) is called by runner.next,
-- outside the walk's coroutine: a stop there (os.exit, the time limit), which unwinds every Lua
-- frame up to the Swift side, leaves the walk suspended here, and the next runner.next resumes it
-- with the stop as the call's error, so the file's later blocks still run. Returns as pcall does.
local function callout(fn) return yield({ call = fn }) end
local function expand()
  if ordered then return ordered end
  ordered = {}
  local count = 0
  local runnable = 0 -- the chosen tests walked that are not pending
  -- The entries of a block with strict hooks are held until one of its tests is to run (then
  -- they go out, and the rest as reached), or the block ends with none run: then the place of
  -- its hooks goes out first, as busted reports a setup that failed instead of the block's tests.
  local held = {}
  local function emit(v)
    local top = held[#held]
    if top and not top.off then top[#top + 1] = v else yield(v) end
  end
  local function release()
    for _, h in ipairs(held) do
      if not h.off then
        h.off = true
        for _, v in ipairs(h) do yield(v) end
      end
    end
  end
  local function keep(entry)
    count = count + 1
    ordered[count] = entry()
    emit(count)
  end
  -- What each block being walked restores when it ends, innermost last: an insulate block's
  -- globals and package.loaded as they were before it (false for another block).
  local states = { false }
  local function snapshot() return { globals = shallowcopy(_G), loaded = shallowcopy(package.loaded) } end
  local function walk(block)
    local children, names = block.children, block.names
    for i = 1, block.count do
      local child = children[i]
      if type(child) ~= "table" then
        local name = fullname(block, names[i])
        local selected = not choosing or chosen(name)
        if selected and child then runnable = runnable + 1 end
        count = count + 1
        ordered[count] = { name = names[i], fullname = name, block = block, fn = child or nil, where = block.wheres[i] or "?",
          pending = child == false, selected = selected }
        if selected and child then release(); yield(count) else emit(count) end
      else
        -- As busted: a block's strict setups run as the run enters it, so the bodies of the
        -- describes inside see what they set; one that failed runs none of them.
        strictsetup(block)
        if block.setupFailed then goto skipped end
        current = child
        states[#states + 1] = child.insulated and snapshot() or false
        local ok, err = callout(function()
          enter(contextof(child))
          child.fn()
        end)
        current = root
        enter(contextof(block))
        if ok then
          -- A block with strict hooks has a place before its tests: where its hooks run in a
          -- host of their own when none of its tests runs (all pending or left out, or none).
          local slot, before = nil, runnable
          -- As busted: --exclude-tags matching a describe's own name skips it whole, hooks too.
          if child.strict and not hastag(blockname(child), options.exclude_tags) then
            count = count + 1
            slot = count
            ordered[slot] = { skip = true }
            held[#held + 1] = {}
          end
          walk(child)
          local h = slot and tremove(held)
          if slot and runnable == before then
            ordered[slot] = { hooks = true, block = child, fullname = blockname(child), where = child.hookwhere or child.where,
              span = count - slot }
            emit(slot)
          end
          if h and not h.off then for _, v in ipairs(h) do emit(v) end end
          blockteardown(child, emit)
        else
          keep(function()
            return { failedBlock = true, name = fullname(child.parent, child.name), where = child.where,
              message = getmetatable(err) == Failure and tostring(err) or tostring(err) }
          end)
        end
        local saved = states[#states]
        states[#states] = nil
        -- As busted (its context's pop_state): when an expose block ends, the insulate block
        -- right around it keeps the globals and package.loaded as they are then, and undoes only
        -- what is set after it.
        if child.exposes and states[#states] then states[#states] = snapshot() end
        -- Past the block: undo what it set, after the block's tests, as busted does.
        if saved then
          restoretable(_G, saved.globals)
          restoretable(package.loaded, saved.loaded)
        end
      end
      ::skipped::
    end
  end
  walk(root)
  blockteardown(root, emit)
  return ordered
end

---------------------------------------------------------------------------------------------------
-- The runner

-- busted's expose: a file with an expose block at its top level is not insulated from the files
-- run after it, which see what its code and its expose bodies set in the globals and
-- package.loaded. Each file here has a Lua state of its own, so a later file's state runs such
-- files first, their describe blocks read apart from this file's; other files' changes are undone.
-- The globals such a file's top level assigns stay in its own environment; its expose bodies'
-- go to the suite's, which this file reads through its own (environments.lua).
function runner.expose(chunk)
  local savedroot, savedcurrent = root, current
  root = newblock(nil, nil, nil)
  root.context = environments.new(environments.suite)
  current = root
  local globals, loaded = shallowcopy(_G), shallowcopy(package.loaded)
  local kept = false
  setupvalue(chunk, 1, environments.spec)
  enter(root.context)
  if pcall(chunk) and root.hasexpose then
    kept = true
    for i = 1, root.count do
      local block = root.children[i]
      if type(block) == "table" and block.exposes then
        current = block
        enter(contextof(block))
        pcall(block.fn)
        current = root
      end
    end
  end
  root, current = savedroot, savedcurrent
  enter(root.context)
  if not kept then
    restoretable(_G, globals)
    restoretable(package.loaded, loaded)
  end
end

-- Runs the spec file's chunk, its globals in the file's environment (its first upvalue is its _ENV).
function runner.file(chunk)
  setupvalue(chunk, 1, environments.spec)
  enter(root.context)
  return chunk()
end

local function listed(t)
  if t.skip then
    return { name = "", skip = true }
  elseif t.hooks then
    return { name = t.fullname, where = t.where or "?", hooks = t.span, selected = true }
  elseif t.failedBlock then
    return { name = t.name, where = t.where or "?", error = t.message, selected = true }
  end
  return { name = t.fullname, where = t.where, pending = t.pending, selected = t.selected }
end

-- The file's walk, one entry at a time: the next entry, as { name, where, pending, selected,
-- error } (see `chosen`; a describe whose body failed is an entry with its error), and its index
-- for runner.run; or a block's teardown that failed ({ teardown = name, message = ... });
-- nil once the file is done. An error the walk did not catch (the time limit) is raised.
local walker
local taggedSeen = {}
-- Whether the walk reached the file's end: a walk that stopped short (its coroutine ended some
-- other way) must fail the file, never pass it with tests it did not reach.
local walked = false
local function walkend()
  if walked then return nil end
  error("the walk of the spec file stopped before its end (the runner's coroutine ended early), so the tests after the last "
    .. "one reported were not run; a test may have replaced a function the runner uses: undo such a change in the test's finally", 0)
end
-- The setup hook a stop (os.exit, the time limit) unwound, noted before it runs: its block's
-- setup has failed then, as it would have with an error (busted runs none of the block's tests).
local setupUnderway
local function recover()
  running, afterhooks, inbody = nil, nil, false
  if setupUnderway then
    setupUnderway[1].setupFailed = { hook = setupUnderway, err = { message = "its setup was stopped before it ended", error = true } }
    setupUnderway = nil
  end
end

local calling = false -- a callout under way (a stop unwinds it, and this function, before it returns)
function runner.next(stopped)
  -- A stop in a test's hook or body left the runner's state as it was when it was stopped.
  recover()
  walker = walker or cocreate(function() expand(); walked = true end)
  local ok, what
  if calling then
    calling = false
    ok, what = coresume(walker, false, type(stopped) == "string" and stopped or "it was stopped before it ended")
  elseif costatus(walker) == "dead" then
    if type(stopped) == "string" and not walked then error(stopped, 0) end
    return walkend()
  else
    ok, what = coresume(walker)
  end
  while ok and type(what) == "table" and what.call do
    calling = true
    local r1, r2, r3 = pcall(what.call)
    calling = false
    ok, what = coresume(walker, r1, r2, r3)
  end
  if not ok then error(what, 0) end
  if type(what) == "table" then return what end
  if what == nil then return walkend() end
  local entry = listed(ordered[what])
  if entry.name ~= "" then
    for _, tags in ipairs({ options.tags or {}, options.exclude_tags or {} }) do
      for _, tag in ipairs(tags) do
        if not taggedSeen[tag] and hastag(entry.name, { tag }) then taggedSeen[tag] = true end
      end
    end
  end
  return entry, what
end

-- The --tags and --exclude-tags words some name the walk reached has, chosen or not: the run
-- names one no file has, which would otherwise be dropped without a word when another one matched.
function runner.tagged()
  local tagged = {}
  for tag in pairs(taggedSeen) do tagged[#tagged + 1] = tag end
  return tagged
end

local function handler(err)
  if getmetatable(err) == Failure or getmetatable(err) == Pending then return err end
  -- One this handler made already (a setup's, raised again for the block's later tests).
  if type(err) == "table" and err.error == true and getmetatable(err) == nil then return err end
  local message = type(err) == "string" and err or (type(err) == "table" and err.message and tostring(err.message)) or inspect(err)
  -- The host's wording of the message, as its own handlers give it (a controller's misspelled
  -- method named from outside it). Called directly: it reads the raising frame at the level a
  -- handler's callee finds it.
  local hosted = type(err) == "string" and getregistry()["crescent.errorText"]
  if hosted then message = hosted(err) or message end
  -- The runner's own frames say nothing about the spec: keep the spec's and the code's. The
  -- message is kept whole (debug.traceback would cut it at a NUL byte).
  local lines = { message }
  for line in gmatch(traceback("", 2) .. "\n", "(.-)\n") do
    if line ~= "" and not sfind(line, "[crescent ", 1, true) and not sfind(line, "in function 'xpcall'", 1, true) then
      lines[#lines + 1] = line
    end
  end
  return { message = concat(lines, "\n"), error = true }
end

-- Drives virtual time until `task_` is done, or nothing is left to step; then why it stopped, if it
-- stopped short.
local function drive(task_)
  while true do
    T.settle()
    if task_.done then return nil end
    local stepped, why = T.step()
    if not stepped then return why end
  end
end

local function said(err)
  -- A string is an error the handler never saw: Lua gives the memory error as is.
  local message = getmetatable(err) == Failure and tostring(err) or type(err) == "string" and err or tostring(err.message or "")
  if getmetatable(err) == Pending then
    message = "pending() called in a hook, not in the test's body (busted counts it an error): " .. message
  end
  return message
end

-- Runs fn as a task, driving virtual time while it waits: true once it has ended, else false and
-- why it stopped short, if known (the task is cancelled then).
local function driven(fn)
  local done
  local task_ = task(function() fn(); done = true end)
  local stopped = drive(task_)
  if done then return true end
  task_:cancel()
  return false, stopped
end

-- A block's teardown hooks once the walk leaves it, when one of its tests ran (its setup ran):
-- in the state its last test left, driving virtual time as a test does. The first that fails is
-- yielded as { teardown = name, message } for the runner to report after the block's tests.
blockteardown = function(block, yield_)
  if not block.setupDone or block.hooksRan or #block.teardown == 0 then return end
  local failed
  local at = 1 -- the teardown hook under way, which a stop is charged to
  local ok, finished, stopped = callout(function()
    return driven(function()
      enter(contextof(block))
      for j, fn in ipairs(block.teardown) do
        at = j
        local ok, err = xpcall(fn, handler)
        if not ok and not failed then failed = { teardown = fullname(block, block.words.teardown[j]), message = said(err) } end
      end
    end)
  end)
  if not ok then finished, stopped = false, tostring(finished) end
  if not finished then
    failed = failed or { teardown = fullname(block, block.words.teardown[at] or "teardown"),
      message = stopped or "the block's teardown did not finish" }
  end
  if failed then yield_(failed) end
end

-- A block's strict setups, run by the walk before the first describe body inside it when no
-- test of it has run them yet (runner.run runs its lazy ones, and these if the walk did not). A
-- failure, or a stop, is the block's setup failure: runner.run and runhooks report it once.
strictsetup = function(block)
  if block.strictDone or block.setupDone or block.setupFailed then return end
  local any = false
  for j in ipairs(block.setup) do any = any or block.strictness.setup[j] == true end
  if not any then return end
  block.strictDone = true
  local hook = { block, "setup", "setup" }
  local ok, finished, stopped = callout(function()
    return driven(function()
      enter(insetup(contextof(block)))
      for j, fn in ipairs(block.setup) do
        if block.strictness.setup[j] then
          hook = { block, "setup", block.words.setup[j] }
          local fine, err = xpcall(fn, handler)
          if not fine then block.setupFailed = { hook = hook, err = err }; return end
        end
      end
    end)
  end)
  if not ok then finished, stopped = false, tostring(finished) end
  if not finished and not block.setupFailed then
    block.setupFailed = { hook = hook, err = { message = stopped or "the block's setup did not finish", error = true } }
  end
end

-- The strict hooks of a block none of whose tests runs, as busted runs them on entering and
-- leaving it: the strict setups of the blocks around it and its own, then the strict teardowns,
-- innermost first. Returns as runner.run does: "error" and the setup's name when a setup failed
-- (busted reports that instead of the block's tests); a teardown that failed as an entry after.
local function runhooks(t)
  local blocks = chain(t.block)
  t.block.hooksRan = true
  local failed, failedname, after
  local finished, stopped = driven(function()
    local ok, err = xpcall(function()
      for _, block in ipairs(blocks) do
        local setupFailed = block.setupFailed
        if setupFailed then failedname = fullname(block, setupFailed.hook[3]); error(setupFailed.err, 0) end
        if not block.setupDone then
          block.setupDone = true
          enter(insetup(contextof(block)))
          for j, fn in ipairs(block.setup) do
            if block.strictness.setup[j] and not block.strictDone then failedname = fullname(block, block.words.setup[j]); fn() end
          end
        end
      end
    end, handler)
    if not ok then failed = err end
    for b = #blocks, 1, -1 do
      local block = blocks[b]
      enter(contextof(block))
      for j, fn in ipairs(block.teardown) do
        if block.strictness.teardown[j] then
          local tok, terr = xpcall(fn, handler)
          if not tok and not after then after = { err = terr, name = fullname(block, block.words.teardown[j]) } end
        end
      end
    end
  end)
  if not finished then
    return "error", stopped or "the block's setup or teardown did not finish", t.fullname, "setup"
  end
  local aftermessage, aftername = nil, nil
  if after then aftermessage, aftername = said(after.err), after.name end
  if failed then return "error", said(failed), failedname, "setup", aftermessage, aftername, "teardown" end
  return "passed", "", nil, nil, aftermessage, aftername, "teardown"
end

-- Runs test i (hooks, body, finally, hooks) as a task, driving virtual time while it waits; returns
-- "passed", "failed" (an assertion in the body), "error" (any other error, or a failure in a
-- setup or before_each hook, as busted counts them) or "pending" (pending() in the body), the
-- message, and, for an error in such a hook, the name busted reports it under ("describe-name
-- before_each") instead of the test's and the hook's kind. Then, when an after_each or teardown
-- hook failed, its message, name and kind: busted reports that as an entry of its own after the
-- test's, which keeps its own outcome.
function runner.run(i)
  recover()
  local t = expand()[i]
  if t.hooks then return runhooks(t) end
  local blocks = chain(t.block)
  local outcome
  local after -- the first after_each or teardown hook that failed: { err, name, kind }
  local hook -- { block, kind } while a hook runs
  local function keep(ok, err, frombody)
    if outcome.ok and not ok then
      outcome.ok, outcome.err = false, err
      -- pending() marks the test pending only from its body; from a hook it is an error, as under busted.
      outcome.kind = (frombody and getmetatable(err) == Pending) and "pending" or (frombody and getmetatable(err) == Failure) and "failed"
        or "error"
      if hook then outcome.name, outcome.hook = fullname(hook[1], hook[3]), hook[2] end
    end
  end
  local function hooks(block, kind)
    enter(contextof(block))
    for j, fn in ipairs(block[kind]) do
      -- A stop in the hook is its block's hook's failure, reported after the test's own outcome.
      T.noteHook(fullname(block, block.words[kind][j]), kind, outcome.ok and "passed" or outcome.kind,
        not outcome.ok and (outcome.kind == "pending" and tostring(outcome.err.message or "") or said(outcome.err)) or "")
      local ok, err = xpcall(fn, handler)
      if not ok and not after then after = { err = err, name = fullname(block, block.words[kind][j]), kind = kind } end
    end
  end
  -- The test's body and its finally run in an environment of the test's own; each hook in its block's.
  local context = environments.new(contextof(t.block))
  local task_ = task(function()
    outcome = { ok = true }
    running = t
    inbody = false
    local ok, err = xpcall(function()
      for _, block in ipairs(blocks) do
        -- A setup that failed runs once: its block's later tests fail with it, as busted runs none of them.
        if block.setupFailed then hook = block.setupFailed.hook; error(block.setupFailed.err, 0) end
        if not block.setupDone then
          block.setupDone = true
          enter(insetup(contextof(block)))
          for j, fn in ipairs(block.setup) do
            -- The walk ran the strict ones already when a describe body inside came first.
            if not (block.strictDone and block.strictness.setup[j]) then
              hook = { block, "setup", block.words.setup[j] }
              setupUnderway = hook
              T.noteHook(fullname(block, hook[3]), "setup")
              local ok, err = xpcall(fn, handler)
              setupUnderway = nil
              if not ok then
                block.setupFailed = { hook = hook, err = err }
                error(err, 0)
              end
            end
          end
        end
      end
      for _, block in ipairs(blocks) do
        enter(contextof(block))
        for j, fn in ipairs(block.before_each) do
          hook = { block, "before_each", block.words.before_each[j] }
          T.noteHook(fullname(block, hook[3]), "before_each")
          fn()
        end
      end
      hook = nil
      T.noteHook()
      inbody = true
      enter(context)
      t.fn()
    end, handler)
    keep(ok, err, inbody)
    inbody = false
    hook = nil
    enter(context)
    if t.finally then
      local fok, ferr = xpcall(t.finally, handler)
      -- As busted: a finally that fails after the test did is an error entry of its own, under
      -- the test's name, after the test's (busted reports both).
      if not fok and not outcome.ok and not after then
        after = { err = ferr, name = t.fullname, kind = "finally" }
      else
        keep(fok, ferr)
      end
    end
    running = nil
    afterhooks = true
    for b = #blocks, 1, -1 do hooks(blocks[b], "after_each") end
    T.noteHook()
    afterhooks = nil
    outcome.done = true
  end)
  local stopped = drive(task_)
  if not (outcome and outcome.done) then
    task_:cancel()
    outcome = { ok = false, kind = "error", err = { message = stopped or "the test did not finish" } }
  end
  local messages = {}
  if not outcome.ok then
    messages[1] = outcome.kind == "pending" and tostring(outcome.err.message or "") or said(outcome.err)
  end
  local aftermessage, aftername, afterkind
  if after then aftermessage, aftername, afterkind = said(after.err), after.name, after.kind end
  if outcome.kind == "pending" and #noticed == 0 then return "pending", messages[1] or "", nil, nil, aftermessage, aftername, afterkind end
  for _, message in ipairs(noticed) do messages[#messages + 1] = message end
  if #messages == 0 then return "passed", "", nil, nil, aftermessage, aftername, afterkind end
  return outcome.kind == "pending" and "failed" or outcome.kind or "failed", concat(messages, "\n"), outcome.name, outcome.hook,
    aftermessage, aftername, afterkind
end

---------------------------------------------------------------------------------------------------
-- require "busted", "luassert" and "say": the same globals, as busted's modules give them

-- As busted 2.1.1's module: its declaring functions, called inside a running test or its hooks,
-- do nothing (they add to the running test, which never runs what it holds) where the globals
-- fail the test; it has no `finally` (a test's own) and no `randomize`.
local busted = { assert = assert, spy = spy, stub = stub, mock = mock, match = match }
for _, name in ipairs { "describe", "context", "insulate", "expose", "it", "spec", "test", "pending", "setup", "teardown",
  "lazy_setup", "lazy_teardown", "strict_setup", "strict_teardown", "before_each", "after_each" } do
  local declare = _G[name]
  -- A tail call: an error names the spec's line, as the global's does.
  busted[name] = function(...)
    if running or afterhooks then return end
    return declare(...)
  end
end
local modules = { busted = busted, luassert = assert, ["luassert.assert"] = assert, say = assertions.say,
  ["luassert.spy"] = doubles.spy, ["luassert.stub"] = doubles.stub, ["luassert.mock"] = doubles.mock,
  ["luassert.match"] = doubles.match, ["luassert.say"] = assertions.say,
  -- `require 'busted.runner'()` at the top of a spec (busted's standalone idiom): a no-op here, as under busted.
  ["busted.runner"] = function() end }
for name, value in pairs(modules) do package.preload[name] = function() return value end end

return runner

-- testing_walk.lua: the walk of a spec file (part of testing.lua, loaded after testing_choice.lua
-- with testing.lua's values, the runner and the state its parts share, S): runner.file runs the
-- file's chunk, runner.next walks it to its next entry, expanding describe bodies as the walk
-- reaches them; runner.expose runs another file's exposing chunk first. What the walk runs of a
-- block's hooks, and runner.run, are testing_run.lua's.
local T, options, assertions, doubles, fakes, environments, runner, S = ...
local Failure = assertions.Failure
local type, ipairs, tostring, error = type, ipairs, tostring, error
local setupvalue = debug.setupvalue
-- What the runner itself calls, taken now: a test may replace the library's functions (busted's
-- specs patch coroutine.resume or string.find to test code), and the walk must still reach
-- the tests after it.
local cocreate, coresume, costatus, yield = coroutine.create, coroutine.resume, coroutine.status, coroutine.yield
local tremove = table.remove
local getmetatable, pcall, next, rawget, rawset = getmetatable, pcall, next, rawget, rawset
local enter = environments.enter
local newblock, blockname, fullname, contextof, recover = S.newblock, S.blockname, S.fullname, S.contextof, S.recover
local choosing, chosen, hastag, noted = S.choosing, S.chosen, S.hastag, S.noted

local function shallowcopy(t)
  local copy = {}
  for k, v in next, t do copy[k] = v end
  return copy
end

local function restoretable(t, saved)
  for k in next, t do if saved[k] == nil then rawset(t, k, nil) end end
  for k, v in next, saved do if rawget(t, k) ~= v then rawset(t, k, v) end end
end

-- The tests in run order (and the describes whose bodies failed), expanding describe bodies as
-- the run reaches them, once per file. The walk runs in the file's one Lua state, as busted's
-- does: it yields each entry as it reaches it (runner.next), the runner runs it, and the walk goes
-- on, so a describe body declared after a test runs after that test. A block's teardown hooks run
-- once, when the walk leaves a block one of whose tests ran (blockteardown, testing_run.lua).
local ordered
-- The spec's code the walk runs (a describe body, a block's teardown) is called by runner.next,
-- outside the walk's coroutine: a stop there (os.exit, the time limit), which unwinds every Lua
-- frame up to the Swift side, leaves the walk suspended here, and the next runner.next resumes it
-- with the stop as the call's error, so the file's later blocks still run. Returns as pcall does.
local function callout(fn) return yield({ call = fn }) end
local function expand()
  if ordered then return ordered end
  ordered = {}
  -- testing_run.lua's, loaded after this part.
  local strictsetup, blockteardown = S.strictsetup, S.blockteardown
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
        S.current = child
        states[#states + 1] = child.insulated and snapshot() or false
        local ok, err = callout(function()
          enter(contextof(child))
          child.fn()
        end)
        S.current = S.root
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
  walk(S.root)
  blockteardown(S.root, emit)
  return ordered
end

-- busted's expose: a file with an expose block at its top level is not insulated from the files
-- run after it, which see what its code and its expose bodies set in the globals and
-- package.loaded. Each file here has a Lua state of its own, so a later file's state runs such
-- files first, their describe blocks read apart from this file's; other files' changes are undone.
-- The globals such a file's top level assigns stay in its own environment; its expose bodies'
-- go to the suite's, which this file reads through its own (environments.lua).
function runner.expose(chunk)
  local savedroot, savedcurrent = S.root, S.current
  local root = newblock(nil, nil, nil)
  root.context = environments.new(environments.suite)
  S.root, S.current = root, root
  local globals, loaded = shallowcopy(_G), shallowcopy(package.loaded)
  local kept = false
  setupvalue(chunk, 1, environments.spec)
  enter(root.context)
  if pcall(chunk) and root.hasexpose then
    kept = true
    for i = 1, root.count do
      local block = root.children[i]
      if type(block) == "table" and block.exposes then
        S.current = block
        enter(contextof(block))
        pcall(block.fn)
        S.current = root
      end
    end
  end
  S.root, S.current = savedroot, savedcurrent
  enter(savedroot.context)
  if not kept then
    restoretable(_G, globals)
    restoretable(package.loaded, loaded)
  end
end

-- Runs the spec file's chunk, its globals in the file's environment (its first upvalue is its _ENV).
function runner.file(chunk)
  setupvalue(chunk, 1, environments.spec)
  enter(S.root.context)
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
-- Whether the walk reached the file's end: a walk that stopped short (its coroutine ended some
-- other way) must fail the file, never pass it with tests it did not reach.
local walked = false
local function walkend()
  if walked then return nil end
  error("the walk of the spec file stopped before its end (the runner's coroutine ended early), so the tests after the last "
    .. "one reported were not run; a test may have replaced a function the runner uses: undo such a change in the test's finally", 0)
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
  if entry.name ~= "" then noted(entry.name) end
  return entry, what
end

S.callout, S.expand = callout, expand

-- testing_run.lua: running a test and the hooks around it (part of testing.lua, loaded after
-- testing_walk.lua with testing.lua's values, the runner and the state its parts share, S):
-- runner.run runs one entry the walk gave, its hooks in busted's order; the walk runs a block's
-- strict setups and its teardowns through strictsetup and blockteardown; the handler words what
-- failed, at the spec's line.
local T, options, assertions, doubles, fakes, environments, runner, S = ...
local Failure = assertions.Failure
local type, ipairs, tostring, error = type, ipairs, tostring, error
local sformat, concat = string.format, table.concat
-- What the runner itself calls, taken now: a test may replace the library's functions (busted's
-- specs patch coroutine.resume or string.find to test code), and the runner must still run the
-- tests after it.
local tinsert = table.insert
local sfind, gmatch = string.find, string.gmatch
local traceback, getregistry = debug.traceback, debug.getregistry
local getmetatable, setmetatable, xpcall, rawget = getmetatable, setmetatable, xpcall, rawget
local task, inspect = task, inspect
local enter = environments.enter
local fullname, contextof, recover, Pending = S.fullname, S.contextof, S.recover, S.Pending
local callout, expand = S.callout, S.expand
-- Failures noticed outside the test's own code (an unmatched fake.http route, the real network
-- or device reached); they fail the running test even when the code under test handled them.
local noticed = fakes.noticed

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

local function chain(block)
  local blocks = {}
  while block do tinsert(blocks, 1, block); block = block.parent end
  return blocks
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
local function blockteardown(block, yield_)
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
local function strictsetup(block)
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
    S.running = t
    S.inbody = false
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
              S.setupUnderway = hook
              T.noteHook(fullname(block, hook[3]), "setup")
              local ok, err = xpcall(fn, handler)
              S.setupUnderway = nil
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
      S.inbody = true
      enter(context)
      t.fn()
    end, handler)
    keep(ok, err, S.inbody)
    S.inbody = false
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
    S.running = nil
    S.afterhooks = true
    for b = #blocks, 1, -1 do hooks(blocks[b], "after_each") end
    T.noteHook()
    S.afterhooks = nil
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

S.strictsetup, S.blockteardown = strictsetup, blockteardown

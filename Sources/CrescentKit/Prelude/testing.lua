-- testing.lua: the API of `crescent test` (busted's names, DESIGN.md "Testing scripts"), loaded in
-- the host of each spec file after the other prelude modules. The chunk takes the host's testing
-- primitives (T, a private table), options ({ update, filter, tags, exclude_tags }) and what
-- assertions.lua, doubles.lua, fakes.lua and environments.lua returned; it declares the blocks and
-- tests (describe/it, the hooks, pending, finally) and returns the runner the Swift side drives
-- and the state its parts share (S). The parts, loaded after it in this order with the same values
-- and those two: testing_choice.lua (which tests a run takes: filters and tags), testing_walk.lua
-- (runner.file runs the spec file, runner.next walks it to its next test) and testing_run.lua
-- (runner.run runs that test, and the hooks around it). What a spec drives and reads of the app
-- (clock, script, send, press, view_text, screen_text, assert.view) is testing_app.lua, loaded
-- after them.
--
-- A spec file runs in one Lua state, as under busted: its chunk and describe bodies run once, in
-- order, and what one test sets in the globals or upvalues the next sees (insulate separates).
-- Between tests the Swift side gives the state a fresh model: services, store, clock, fakes.

local T, options, assertions, doubles, fakes, environments = ...
local where = assertions.where
local type, pairs, ipairs, tostring, error = type, pairs, ipairs, tostring, error
local sformat = string.format
local mathtype = math.type
local getmetatable, setmetatable = getmetatable, setmetatable

-- As busted by default (its `lpath`), a project's `src/` folder is searched first: a library laid
-- out as src/NAME.lua loads by its name.
package.path = "./src/?.lua;./src/?/?.lua;./src/?/init.lua;" .. package.path

-- The runner; the host calls its `http`, `process` and `call` for the code under test (fakes.lua).
local runner = { http = fakes.http, process = fakes.process, call = fakes.call, reset = fakes.reset }

-- The state the declarations and the runner's parts share, each field with who writes it. The
-- rest of a part's state, and what it calls, are locals of its own: the runner is hot, once per
-- test, and a local costs no table lookup.
local S = {
  -- The file's top block, made below. runner.expose (testing_walk.lua) puts another in its
  -- place while it runs an exposing file's chunk, and puts this one back.
  root = nil,
  -- The block declarations go to: root, or the block whose body runs; set below, by the walk
  -- (testing_walk.lua) and by runner.expose.
  current = nil,
  -- The test running, while one runs (`finally` keeps its function there, `pending()` raises in
  -- it); set and cleared by runner.run (testing_run.lua), cleared by recover (below).
  running = nil,
  -- True while a test's after_each and teardown hooks run, where nothing may be declared either;
  -- runner.run, recover.
  afterhooks = nil,
  -- True while a test's own body runs: `finally` belongs there, not in a hook (busted has none
  -- there); runner.run, recover.
  inbody = nil,
  -- The setup hook under way ({ block, kind, word }), noted by runner.run before it runs: a stop
  -- (os.exit, the time limit) unwinds it, and recover marks its block's setup failed.
  setupUnderway = nil,
}
-- Besides the state, what one part defines for those loaded after it, set once as it loads:
-- here newblock, blockname, fullname, contextof, recover and the Pending marker; testing_choice.lua
-- choosing, chosen, hastag and noted; testing_walk.lua callout and expand; testing_run.lua
-- strictsetup and blockteardown (which the walk calls, so it reads them once the walk starts).

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
S.root = newblock(nil, nil, nil)
S.root.context = environments.new(environments.suite)
S.current = S.root

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
-- The Pending marker `pending()` raises in the running test.
local Pending = {}

-- After a stop in a test's hook or body (os.exit, the time limit: it unwinds every Lua frame up
-- to the Swift side), the state as no test runs; the setup hook that was under way has failed,
-- as it would have with an error (busted runs none of the block's tests).
local function recover()
  S.running, S.afterhooks, S.inbody = nil, nil, false
  local setupUnderway = S.setupUnderway
  if setupUnderway then
    setupUnderway[1].setupFailed = { hook = setupUnderway, err = { message = "its setup was stopped before it ended", error = true } }
    S.setupUnderway = nil
  end
end

-- As busted: a test declares nothing; a test or block declared inside one would never run, and
-- the test would pass without it.
local function notinatest(what, level)
  if S.running or S.afterhooks then
    error(sformat("'%s' not supported inside a running test (declare it in a describe block or at the top of the file)", what),
      level or 3)
  end
end

local function declareblock(name, fn, what, insulated)
  notinatest(what, 4)
  local current = S.current
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

-- A test is its function (false for a pending one), its name and where it was declared.
local function declare(name, fn)
  local block = S.current
  local n = block.count + 1
  block.count = n
  block.children[n] = fn or false
  block.names[n] = name
  block.wheres[n] = where(3)
end

function it(name, fn)
  if S.running or S.afterhooks then notinatest("it") end
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
  if S.running then error(setmetatable({ message = name }, Pending), 0) end
  checkname(name, nil, "pending")
  declare(name, nil)
end

-- finally(fn) inside a test: fn runs once the test's body ends, passed or not (busted keeps the last).
function finally(fn)
  local running = S.running
  if not running then error("finally: call it inside a test (it(\"...\", function() ... finally(fn) end))", 2) end
  if not S.inbody then
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
    local current = S.current
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
    if S.running or S.afterhooks then return end
    return declare(...)
  end
end
local modules = { busted = busted, luassert = assert, ["luassert.assert"] = assert, say = assertions.say,
  ["luassert.spy"] = doubles.spy, ["luassert.stub"] = doubles.stub, ["luassert.mock"] = doubles.mock,
  ["luassert.match"] = doubles.match, ["luassert.say"] = assertions.say,
  -- `require 'busted.runner'()` at the top of a spec (busted's standalone idiom): a no-op here, as under busted.
  ["busted.runner"] = function() end }
for name, value in pairs(modules) do package.preload[name] = function() return value end end

S.newblock, S.blockname, S.fullname, S.contextof, S.recover, S.Pending = newblock, blockname, fullname, contextof, recover, Pending

return runner, S

-- controllers.lua: controllers, their lifecycle, navigation, composition, routing and commands.
--
-- Written in Lua on a few host primitives (passed as this chunk's argument, out of scripts' reach):
-- scopes (owners that end everything they adopted), setScope/within (which scope owns what Lua
-- code starts), report (a handler error: printed, run fails), warn (a message on stderr that does
-- not fail the run), onTeardown, setDepth (the navigation
-- stack keeps the run alive), present (the top controller's view) and show (fill a view.slot).
--
-- Lifecycle, in order: init(args), loadView(), viewDidLoad(), viewWillAppear(), viewDidAppear(),
-- viewWillDisappear(), viewDidDisappear(), dealloc(); each optional, each run inside a task so it
-- may wait on a service. What a controller starts in init/loadView/viewDidLoad ends at dealloc;
-- what it starts while appearing or visible ends after viewDidDisappear. Transitions run one at a
-- time, in the order they were asked for, with UIKit's interleaving: pushing B over A runs
-- B:init, B:loadView, B:viewDidLoad, A:viewWillDisappear, B:viewWillAppear, A:viewDidDisappear,
-- B:viewDidAppear.
local P = ...
local type, error, setmetatable, rawget, rawset, tostring, select, pairs, ipairs, next =
  type, error, setmetatable, rawget, rawset, tostring, select, pairs, ipairs, next
local xpcall, traceback, insert, remove, concat, sort = xpcall, debug.traceback, table.insert, table.remove, table.concat, table.sort
local spawn, observe_, on_, after_, every_ = task, observe, on, timer.after, timer.every

local Controller = {}          -- the base of every controller class
local state = setmetatable({}, { __mode = "k" })   -- controller -> private state
local stack = {}               -- the navigation stack, bottom first
local routes = {}

local function isClass(value) return type(value) == "table" and rawget(value, "__controllerClass") == true end
local function nameOf(self)
  if isClass(self) then return rawget(self, "__name") end
  return rawget(getmetatable(self), "__name") or "controller"
end

-- Runs a lifecycle method (or any method) reporting its error, without stopping the transition.
local function call(self, method, ...)
  local f = self[method]
  if type(f) ~= "function" then return end
  local ok, err = xpcall(f, traceback, self, ...)
  if not ok then P.report(err, "error in " .. nameOf(self) .. ":" .. method) end
  return ok, err
end

-- The scope that owns what the controller starts now.
local function scopeOf(self)
  local st = state[self]
  if st.appearance then return st.appearance end
  return st.lifetime
end

-- Runs `fn` with the controller's scope as the owner of what it starts.
local function owned(self, fn, ...)
  local st = state[self]
  if not st or st.deallocated then error(nameOf(self) .. ": the controller was deallocated", 3) end
  return P.within(scopeOf(self), fn, ...)
end

---------------------------------------------------------------------------------------------------
-- Classes and instances

function controller(name, base)
  if type(name) ~= "string" or name == "" then
    error("bad argument #1 to 'controller' (name must be a non-empty string)", 2)
  end
  if base ~= nil and not isClass(base) then
    error("bad argument #2 to 'controller' (base must be a class made by controller(...), got " .. type(base) .. ")", 2)
  end
  local class = { __controllerClass = true, __name = name, __base = base }
  class.__index = class
  class.__tostring = function(self) return name .. "#" .. state[self].id end
  return setmetatable(class, {
    __index = base or Controller,
    __tostring = function() return "controller " .. name end,
  })
end

-- A method spelled like a lifecycle step but not one (viewDidLoaded) is never called as one: the
-- first instance of a class warns about each, naming the step it resembles.
local LIFECYCLE = { "init", "loadView", "viewDidLoad", "viewWillAppear", "viewDidAppear",
  "viewWillDisappear", "viewDidDisappear", "dealloc" }
local isStep = {}
for _, step in ipairs(LIFECYCLE) do isStep[step] = true end
local checkedClasses = setmetatable({}, { __mode = "k" })
local function checkLifecycleNames(class)
  while class ~= nil and not checkedClasses[class] do
    checkedClasses[class] = true
    local names = {}
    for key, value in next, class do
      if type(key) == "string" and type(value) == "function" and not isStep[key] and key:sub(1, 2) ~= "__" then names[#names + 1] = key end
    end
    sort(names)
    for _, key in ipairs(names) do
      local step = P.resembles(key, LIFECYCLE)
      if step then
        P.warn(nameOf(class) .. ":" .. key .. " is not a lifecycle step, so it is never called as one; did you mean '" .. step .. "'?")
      end
    end
    class = rawget(class, "__base")
  end
end

local nextId = 0
local function instantiate(classOrInstance, args, caller)
  if state[classOrInstance] then return classOrInstance, false end
  if not isClass(classOrInstance) then
    error(caller .. ": expected a controller class or instance, got " .. type(classOrInstance), 3)
  end
  checkLifecycleNames(classOrInstance)
  nextId = nextId + 1
  local self = setmetatable({ children = {} }, classOrInstance)
  state[self] = {
    id = nextId, args = args or {}, lifetime = P.scope(classOrInstance.__name),
    appearance = nil, visible = false, loaded = false, deallocated = false,
    commands = {}, commandOrder = {},
  }
  return self, true
end

-- init, loadView, viewDidLoad, once per instance.
local function load(self)
  local st = state[self]
  if st.loaded then return end
  st.loaded = true
  P.setScope(st.lifetime)
  call(self, "init", st.args)
  local f = self.loadView
  if type(f) == "function" then
    local ok, root = xpcall(f, traceback, self)
    if not ok then
      P.report(root, "error in " .. nameOf(self) .. ":loadView")
    elseif root ~= nil then
      if tostring(root):sub(1, 6) ~= "<view." then
        P.report(nameOf(self) .. ":loadView must return a view component (view.text, view.stack, ...), got " .. type(root),
          "error in " .. nameOf(self) .. ":loadView")
      else
        st.root = root
        self.view = setmetatable({ root = root }, { __index = function(_, id) return root:find(id) end })
      end
    end
  end
  call(self, "viewDidLoad")
end

local function willAppear(self)
  local st = state[self]
  if st.visible or st.deallocated then return end
  st.visible = true
  st.appearance = P.scope(nameOf(self) .. " (visible)")
  P.setScope(st.appearance)
  call(self, "viewWillAppear")
  for _, child in ipairs(self.children) do willAppear(child) end
end

local function didAppear(self)
  local st = state[self]
  if not st.visible then return end
  P.setScope(st.appearance)
  call(self, "viewDidAppear")
  for _, child in ipairs(self.children) do didAppear(child) end
end

local function willDisappear(self)
  local st = state[self]
  if not st.visible then return end
  P.setScope(st.appearance)
  call(self, "viewWillDisappear")
  for _, child in ipairs(self.children) do willDisappear(child) end
end

local function didDisappear(self)
  local st = state[self]
  if not st.visible then return end
  for _, child in ipairs(self.children) do didDisappear(child) end
  P.setScope(st.lifetime)
  call(self, "viewDidDisappear")
  st.visible = false
  local appearance = st.appearance
  st.appearance = nil
  if appearance then appearance:close() end
end

local function dealloc(self)
  local st = state[self]
  if not st or st.deallocated then return end
  for i = #self.children, 1, -1 do dealloc(self.children[i]) end
  P.setScope(st.lifetime)
  call(self, "dealloc")
  st.deallocated = true
  if st.appearance then st.appearance:close() end
  st.lifetime:close()
end

---------------------------------------------------------------------------------------------------
-- Navigation: transitions run one at a time, as a task owned by the script

local queue, running = {}, false

local function present()
  local top = stack[#stack]
  P.setDepth(#stack)
  if top then P.present(state[top].root, nameOf(top)) else P.present(nil, "") end
end

local function runQueue()
  if running then return end
  running = true
  P.within(P.scriptScope, spawn, function()
    while #queue > 0 do
      local step = remove(queue, 1)
      step()
      P.setScope(P.scriptScope)
      present()
    end
    running = false
  end)
end

local function enqueue(step)
  queue[#queue + 1] = step
  runQueue()
end

local function pushStep(self)
  return function()
    local below = stack[#stack]
    load(self)
    if below then willDisappear(below) end
    stack[#stack + 1] = self
    P.setDepth(#stack)
    willAppear(self)
    if below then didDisappear(below) end
    didAppear(self)
  end
end

app = app or {}

function app.push(classOrInstance, args)
  local self, fresh = instantiate(classOrInstance, args, "app.push")
  if not fresh and state[self].loaded then error("app.push: this controller is already in use", 2) end
  enqueue(pushStep(self))
  return self
end

function app.pop()
  enqueue(function()
    local top = remove(stack)
    if not top then return end
    local below = stack[#stack]
    willDisappear(top)
    if below then willAppear(below) end
    didDisappear(top)
    if below then didAppear(below) end
    dealloc(top)
  end)
end

function app.replace(classOrInstance, args)
  local self = instantiate(classOrInstance, args, "app.replace")
  enqueue(function()
    local old = remove(stack)
    load(self)
    if old then willDisappear(old) end
    stack[#stack + 1] = self
    willAppear(self)
    if old then didDisappear(old) end
    didAppear(self)
    if old then dealloc(old) end
  end)
  return self
end

function app.route(pattern, class)
  if type(pattern) ~= "string" then error("bad argument #1 to 'app.route' (pattern string expected, got " .. type(pattern) .. ")", 2) end
  if not isClass(class) then error("bad argument #2 to 'app.route' (controller class expected, got " .. type(class) .. ")", 2) end
  local parts = {}
  for part in pattern:gmatch("[^/]+") do parts[#parts + 1] = part end
  routes[#routes + 1] = { pattern = pattern, parts = parts, class = class }
end

function app.open(path, args)
  if type(path) ~= "string" then error("bad argument #1 to 'app.open' (path string expected, got " .. type(path) .. ")", 2) end
  local parts = {}
  for part in path:gmatch("[^/]+") do parts[#parts + 1] = part end
  for _, route in ipairs(routes) do
    if #route.parts == #parts then
      local params, matched = {}, true
      for i, part in ipairs(route.parts) do
        if part:sub(1, 1) == ":" then params[part:sub(2)] = parts[i]
        elseif part ~= parts[i] then matched = false break end
      end
      if matched then
        for k, v in pairs(args or {}) do params[k] = v end
        return app.push(route.class, params)
      end
    end
  end
  local known = {}
  for _, route in ipairs(routes) do known[#known + 1] = route.pattern end
  error("app.open: no route matches '" .. path .. "' (routes: " .. (#known > 0 and concat(known, ", ") or "none") .. ")", 2)
end

setmetatable(app, {
  __index = function(_, key)
    if key == "top" then return stack[#stack] end
    if key == "stack" then
      local copy = {}
      for i, c in ipairs(stack) do copy[i] = c end
      return copy
    end
  end,
})

---------------------------------------------------------------------------------------------------
-- Commands (target-action)

local function commandList(self)
  local st = state[self]
  local entries = {}
  for _, name in ipairs(st.commandOrder) do entries[#entries + 1] = { name, st.commands[name].help } end
  entries[#entries + 1] = { "help", "list the commands" }
  entries[#entries + 1] = { "quit", "exit" }
  local width = 0
  for _, entry in ipairs(entries) do width = math.max(width, #entry[1]) end
  local lines = {}
  for _, entry in ipairs(entries) do
    lines[#lines + 1] = "  " .. entry[1] .. string.rep(" ", width - #entry[1] + 2) .. entry[2]
  end
  return concat(lines, "\n")
end

-- Commands run one after another, each as part of one task, so that piped input behaves like a
-- shell: `add milk` then `quit` quits after the add has finished, even when the add waits on a
-- service. The command's method runs with its controller's scope as the owner of what it starts.
-- The coroutine of the task that runs the pending commands, while it runs; an interrupt (a remote
-- client's, for a command it sent) may end that task mid-command.
local pendingCommands, commandsRunner = {}, nil

-- A command's `done(ok, message)`, when it has one (remote control's send), hears how it went.
local function dispatch(name, args, count, done)
  if name == "quit" or name == "exit" then
    done(true)
    return app.exit(0)
  end
  local top = stack[#stack]
  if not top then
    local message = "no controller to receive '" .. name .. "'"
    P.warn(message)
    return done(false, message)
  end
  local st = state[top]
  local command = st.commands[name]
  if name == "help" and not command then
    print("commands of " .. nameOf(top) .. ":\n" .. commandList(top))
    return done(true)
  end
  if not command then
    local message = "unknown command '" .. name .. "'; commands of " .. nameOf(top) .. ":\n" .. commandList(top)
    P.warn(message)
    return done(false, message)
  end
  P.setScope(scopeOf(top))
  local ok, err = call(top, command.method, table.unpack(args, 1, count))
  P.setScope(P.scriptScope)
  done(ok, not ok and "error in " .. nameOf(top) .. ":" .. command.method .. ": " .. tostring(err) or nil)
end

local function ignore() end

local function runCommands()
  if commandsRunner and coroutine.status(commandsRunner) ~= "dead" then return end
  P.within(P.scriptScope, spawn, function()
    commandsRunner = coroutine.running()
    while #pendingCommands > 0 do
      local command = remove(pendingCommands, 1)
      local done = command.done or ignore
      -- A command that never finishes (its task cancelled, the host exiting) is not a success.
      local ok, err = pcall(dispatch, command.name, command.args, command.count, done)
      if not ok then
        done(false, "the command did not finish: " .. tostring(err))
        error(err, 0)
      end
    end
    commandsRunner = nil
  end)
end

local function send(done, name, ...)
  pendingCommands[#pendingCommands + 1] = { name = name, args = { ... }, count = select("#", ...), done = done }
  runCommands()
  return true
end

function app.send(name, ...)
  if type(name) ~= "string" then error("bad argument #1 to 'app.send' (command name string expected, got " .. type(name) .. ")", 2) end
  return send(nil, name, ...)
end

function Controller:command(name, method, help)
  if type(name) ~= "string" or not name:match("^[%w_%-]+$") then
    error("bad argument #1 to 'command' (a command name of letters, digits, _ or -, got " .. tostring(name) .. ")", 2)
  end
  if type(method) ~= "string" then error("bad argument #2 to 'command' (method name string expected, got " .. type(method) .. ")", 2) end
  if type(self[method]) ~= "function" then error("command '" .. name .. "': " .. nameOf(self) .. " has no method '" .. method .. "'", 2) end
  local st = state[self]
  if not st.commands[name] then st.commandOrder[#st.commandOrder + 1] = name end
  st.commands[name] = { method = method, help = help or "" }
end

---------------------------------------------------------------------------------------------------
-- What a controller owns

-- A handler given as a method name runs that method as a task of the controller.
-- A method name becomes a function that runs the method as a task per call; with `latest`, a
-- call cancels the task of the call before while it is still running.
local function handler(self, h, latest)
  if type(h) ~= "string" then return h end
  local name = h
  if type(self[name]) ~= "function" then error(nameOf(self) .. " has no method '" .. name .. "'", 3) end
  local current
  return function(...)
    local st = state[self]
    if not st or st.deallocated then return end
    if latest and current and not current.done then current:cancel() end
    local args, count = { ... }, select("#", ...)
    current = owned(self, spawn, function() call(self, name, table.unpack(args, 1, count)) end)
  end
end

-- The options for a method-name handler, whose `latest` the handler itself carries out.
local function methodOptions(h, options)
  if type(h) ~= "string" or type(options) ~= "table" or type(options.latest) ~= "boolean" then return options end
  local copy = {}
  for k, v in pairs(options) do if k ~= "latest" then copy[k] = v end end
  return copy
end

local function wantsLatest(options) return type(options) == "table" and options.latest == true end

function Controller:observe(object, key, h, options)
  return owned(self, observe_, object, key, handler(self, h, wantsLatest(options)), methodOptions(h, options))
end
function Controller:on(name, h, options)
  return owned(self, on_, name, handler(self, h, wantsLatest(options)), methodOptions(h, options))
end
function Controller:after(seconds, h) return owned(self, after_, seconds, handler(self, h)) end
function Controller:every(seconds, h) return owned(self, every_, seconds, handler(self, h)) end
function Controller:task(fn, ...) return owned(self, spawn, handler(self, fn), ...) end
function Controller:start(service, options) return owned(self, service.start, service, options) end
function Controller:stop(service) return owned(self, service.stop, service) end

---------------------------------------------------------------------------------------------------
-- Composition

function Controller:addChild(classOrInstance, slotId)
  local child = instantiate(classOrInstance, nil, "addChild")
  local st = state[self]
  if child.parent then error("addChild: the child already has a parent", 2) end
  child.parent = self
  self.children[#self.children + 1] = child
  load(child)
  if slotId ~= nil then
    local slot = st.root and st.root:find(slotId)
    if not slot then error("addChild: " .. nameOf(self) .. "'s view has no view.slot with id '" .. tostring(slotId) .. "'", 2) end
    state[child].slot = slot
    P.show(slot, state[child].root)
  end
  if st.visible then
    willAppear(child)
    didAppear(child)
  end
  P.setScope(scopeOf(self))
  return child
end

function Controller:removeChild(child)
  local st = state[child]
  if not st or child.parent ~= self then error("removeChild: not a child of this controller", 2) end
  for i, c in ipairs(self.children) do if c == child then remove(self.children, i) break end end
  willDisappear(child)
  didDisappear(child)
  dealloc(child)
  if st.slot then P.show(st.slot, nil) end
  child.parent = nil
  P.setScope(scopeOf(self))
end

---------------------------------------------------------------------------------------------------
-- Teardown: at exit every visible controller disappears, then all are deallocated, top first

P.onTeardown(function()
  for i = #stack, 1, -1 do
    local c = stack[i]
    willDisappear(c)
    didDisappear(c)
  end
  for i = #stack, 1, -1 do dealloc(stack[i]) end
  stack = {}
  P.setDepth(0)
end)

---------------------------------------------------------------------------------------------------
-- For the host: what the REPL completes after ':' (raw reads only, no user code runs)

return {
  -- app.send whose command, when it has run, calls report(token, ok, message) (remote
  -- control's send answers with how it went; a second report of a token is ignored there).
  sendCommand = function(report, token, name, ...)
    return send(function(ok, message) report(token, ok, message) end, name, ...)
  end,
  commandNames = function()
    local top = stack[#stack]
    local st = top and state[top]
    if not st then return {} end
    local names = {}
    for _, name in ipairs(st.commandOrder) do names[#names + 1] = name end
    names[#names + 1] = "help"
    names[#names + 1] = "quit"
    return names
  end,
}

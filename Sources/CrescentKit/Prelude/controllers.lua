-- controllers.lua: controllers, their lifecycle, navigation, composition, routing and commands.
--
-- Written in Lua on a few host primitives (passed as this chunk's argument, out of scripts' reach):
-- scopes (owners that end everything they adopted), setScope/within (which scope owns what Lua
-- code starts), report (a handler error: printed, run fails), warn (a message on stderr that does
-- not fail the run), onTeardown, willLoadFirst (the first controller starts loading: a run on a
-- terminal holds its output from there), setDepth (the navigation stack keeps the run alive), present (the top controller's view and key hints), show (fill a
-- view.slot), keyNames (the keys with word names), showHelp (the `?` text: over the view on a
-- terminal, else printed), helpKey (true when the shown help took a key: scrolled or closed),
-- redraw (ctrl-l), suspend (ctrl-z), commandLineOpen (whether the terminal's `:` line is open), selectionKey (a key's effect on the shown view's selection
-- and focus), busy (which key or command runs, for the terminal's busy indicator) and stopping
-- (whether a Ctrl-C is stopping it).
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
local xpcall, traceback, getinfo, getlocal, insert, remove, concat, sort =
  xpcall, debug.traceback, debug.getinfo, debug.getlocal, table.insert, table.remove, table.concat, table.sort
-- `spawn` runs the controllers' own code as tasks whose spawned programs belong to the
-- controller; `task_` is the script's task (self:task), whose spawned programs end with it.
local spawn, task_, observe_, on_, after_, every_ = P.methodTask, task, observe, on, timer.after, timer.every
local getmetatable, inspect_ = getmetatable, inspect
-- The real metatable, past a __metatable lock (a service's error model has one).
local rawmetatable = debug.getmetatable

local Controller = {}          -- the base of every controller class
local state = setmetatable({}, { __mode = "k" })   -- controller -> private state
local stack = {}               -- the navigation stack, bottom first
local routes = {}

local function isClass(value) return type(value) == "table" and rawget(value, "__controllerClass") == true end
local function nameOf(self)
  if isClass(self) then return rawget(self, "__name") end
  return rawget(getmetatable(self), "__name") or "controller"
end

-- The methods of the controller's classes (not the base's helpers), then with `helpers` the
-- base's too (self:every, self:command, ...).
local function methodNames(self, helpers)
  local names = {}
  local class = isClass(self) and self or getmetatable(self)
  while class ~= nil do
    for key, value in next, class do
      if type(key) == "string" and type(value) == "function" and key:sub(1, 2) ~= "__" then names[#names + 1] = key end
    end
    class = rawget(class, "__base")
  end
  if helpers then
    for key, value in next, Controller do
      if type(key) == "string" and type(value) == "function" then names[#names + 1] = key end
    end
  end
  return names
end

-- Raises "signature: argument #N is one too many (it takes ...)" at the caller of the function
-- calling it, as the host's functions word it (ExtraArguments.swift): `...` is what the caller
-- passed past the `count` arguments taken; trailing nils are no arguments.
local function tooMany(signature, takes, count, ...)
  for i = 1, select("#", ...) do
    if select(i, ...) ~= nil then
      error(signature .. ": argument #" .. (count + i) .. " is one too many (it takes " .. takes .. ")", 3)
    end
  end
end

-- "T has no method 'shw'; did you mean 'show'?", with the closest one when one is close.
local function noMethod(self, method)
  local closest = P.resembles(method, methodNames(self))
  return nameOf(self) .. " has no method '" .. method .. "'" .. (closest and "; did you mean '" .. closest .. "'?" or "")
end

-- An error value that is not a string (`error({ code = 1 })`) as a message: the line of the
-- first Lua frame under the handler that raised it (Lua adds no place to a table), then the
-- value as its __tostring or inspect shows it, where `tostring` gave only "table: 0x...".
-- With `thread`, the frames searched are that coroutine's, from its top.
local function errorValueMessage(value, thread)
  local meta = getmetatable(value)
  local shown = meta and meta.__tostring and tostring(value) or inspect_(value)
  for level = thread and 0 or 3, 12 do
    local info
    if thread then info = getinfo(thread, level, "Sl") else info = getinfo(level, "Sl") end
    if not info then break end
    if info.what ~= "C" and info.currentline > 0 then
      return info.short_src .. ":" .. info.currentline .. ": " .. shown
    end
  end
  return shown
end

-- "attempt to index a nil value (field 'view')" in a method whose self is a controller class:
-- `C:refresh()` where app.top:refresh() was meant. The hint for `message` when the first Lua
-- frame from `level` (of `thread`, else of the running code) is such a method; nil otherwise.
local function classSelfHint(message, level, thread)
  if not message:find("a nil value (field '", 1, true) then return nil end
  for at = level, level + 3 do
    local info
    if thread then info = getinfo(thread, at, "Sn") else info = getinfo(at, "Sn") end
    if not info then return nil end
    if info.what ~= "C" then
      local name, value
      if thread then name, value = getlocal(thread, at, 1) else name, value = getlocal(at, 1) end
      if name ~= "self" or not isClass(value) then return nil end
      local class, method = nameOf(value), info.name or "method"
      return "; self is the class " .. class .. " here, which has no view or state of its own: app.push(" .. class
        .. ") shows an instance of it, app.top, so call app.top:" .. method .. "(...) where " .. class .. ":" .. method .. "(...) was written"
    end
  end
  return nil
end

-- `function C.viewDidLoad()`: a method defined with '.' has no self. The hint for an error in
-- `method` of self's class, when its first parameter is not self; nil otherwise.
local function dotDefinedHint(self, method)
  local f = self[method]
  if type(f) ~= "function" or getlocal(f, 1) == "self" then return nil end
  local class = nameOf(self)
  return "; " .. class .. "." .. method .. " was defined with '.', so it gets no self: define it with ':' (function " .. class .. ":"
    .. method .. "())"
end

-- The message handler of a controller's own code: Lua's "attempt to call a nil value (method
-- 'evry')" gets the controller's method or helper it resembles (`self:evry(1, "tick")`: did you
-- mean 'every'?), and "attempt to index a nil value (field 'view')" in init or loadView says
-- when self.view comes to be; then the traceback.
local function handlerFor(self, method)
  return function(message)
    if type(message) ~= "string" and type(message) ~= "number" then message = errorValueMessage(message) end
    if type(message) == "string" then
      local name = message:match("attempt to call a nil value %(method '([%w_]+)'%)$")
      local closest = name and P.resembles(name, methodNames(self, true))
      if closest then message = message .. "; did you mean '" .. closest .. "' (a method of " .. nameOf(self) .. ")?" end
      if message:find("(global 'self')", 1, true) then message = message .. (dotDefinedHint(self, method) or "") end
      if method ~= "init" and method ~= "loadView" and rawget(self, "view") == nil and type(self.loadView) ~= "function"
          and message:find("attempt to index a nil value (field 'view')", 1, true) then
        message = message .. "; " .. nameOf(self) .. " defines no loadView, so it has no view: give it one (function " .. nameOf(self)
          .. ":loadView() return view.text { text = \"...\" } end)"
      end
      if (method == "init" or method == "loadView") and rawget(self, "view") == nil
          and message:find("attempt to index a nil value (field 'view')", 1, true) then
        message = message .. "; self.view exists from viewDidLoad on: " .. nameOf(self) .. ":" .. method
          .. " runs before loadView's view is made, so use the view in viewDidLoad (or later)"
      end
    end
    return traceback(message, 2)
  end
end

-- Runs a lifecycle method (or any method) reporting its error, without stopping the transition.
local function call(self, method, ...)
  local f = self[method]
  if type(f) ~= "function" then return end
  local ok, err = xpcall(f, handlerFor(self, method), self, ...)
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

-- Where each class name was first made ("file:line"), for a second class of the name.
local classPlaces = {}
-- The classes made, in order ({ name, place }), and whether any instance was: a run that ends
-- with classes and no instance forgot app.push (unshownNote, for the host).
local madeClasses, instantiated = {}, false
function controller(name, base, ...)
  if type(name) ~= "string" or name == "" then
    error("bad argument #1 to 'controller' (name must be a non-empty string)", 2)
  end
  tooMany("controller(name[, base])", "a name and a base class (optional)", 2, ...)
  if base ~= nil and not isClass(base) then
    error("bad argument #2 to 'controller' (base must be a class made by controller(...), got " .. type(base) .. ")", 2)
  end
  -- Two classes of one name (made at different lines; a script loaded again makes its own anew)
  -- are told apart by nothing in messages, help or the remote's `controllers`.
  local info = getinfo(2, "Sl")
  local place = info and info.currentline > 0 and info.short_src .. ":" .. info.currentline or nil
  local earlier = classPlaces[name]
  if place and earlier and earlier ~= place then
    P.warn("warning: " .. place .. ": controller(\"" .. name .. "\") makes a second class named " .. name .. " (the first at " .. earlier
      .. "); messages and help cannot tell them apart: give each its own name, or add methods to the first")
  end
  if place then classPlaces[name] = place end
  madeClasses[#madeClasses + 1] = { name = name, place = place }
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
-- The methods a selectable list or table calls (on enter, on a move): misspelled, they are
-- never called either.
local CALLBACKS = { "didSelect", "selectionChanged" }
local isCallback = {}
for _, name in ipairs(CALLBACKS) do isCallback[name] = true end
local checkedClasses = setmetatable({}, { __mode = "k" })

-- A helper named after a step with a word of its own (reloadView, onInit, initUI, initRows) is
-- a method of its own, not a misspelling: camelCase puts a word before the step, or a capital
-- after it. A misspelling keeps the step's first letter (viewDidLoaded, loadview, dealoc), so a
-- name that starts otherwise (unit for init) is a word of its own too.
local function ownWord(key, step)
  -- A capitalized word put inside the step (viewDidUnload, UIKit's own) is a name of its own:
  -- the rest of the key is the step, and the insertion starts a camelCase word.
  local lkey, lstep = key:lower(), step:lower()
  local prefix = 0
  while prefix < #lstep and lkey:byte(prefix + 1) == lstep:byte(prefix + 1) do prefix = prefix + 1 end
  local suffix = 0
  while suffix < #lstep - prefix and lkey:byte(#lkey - suffix) == lstep:byte(#lstep - suffix) do suffix = suffix + 1 end
  if prefix > 0 and prefix + suffix == #lstep and #key > #step and key:sub(prefix + 1, prefix + 1):match("%u") then
    return true
  end
  local at = lkey:find(lstep, 1, true)
  if at and #key > #step then
    if at > 1 then return true end
    -- The step and a longer word in lower case (deallocate, initialize) is a word of its own;
    -- an ending of one or two letters (viewDidLoaded, loadViews) is the step misspelt.
    if #key - #step >= 3 and key:sub(#step + 1, #step + 1):match("%l") then return true end
    if key:sub(#step + 1, #step + 1):match("[%u%d_]") then return true end
  end
  return key:sub(1, 1):lower() ~= step:sub(1, 1):lower()
end
local function checkLifecycleNames(class)
  while class ~= nil and not checkedClasses[class] do
    checkedClasses[class] = true
    local names = {}
    for key, value in next, class do
      if type(key) == "string" and type(value) == "function" and not isStep[key] and not isCallback[key] and key:sub(1, 2) ~= "__" then
        names[#names + 1] = key
      end
    end
    sort(names)
    for _, step in ipairs(LIFECYCLE) do
      local value = rawget(class, step)
      if value ~= nil and type(value) ~= "function" then
        -- Said at the line that made the class: the assignment's own line is not known.
        local name = nameOf(class)
        local place = classPlaces[name] and classPlaces[name] .. ": " or ""
        local kind = type(value) == "userdata" and tostring(value):match("^<view%.(%w+)")
        if kind then
          P.warn("warning: " .. place .. name .. "." .. step .. " is a view component (view." .. kind .. "), not a function, so it is never called: "
            .. "define function " .. name .. ":" .. step .. "() " .. (step == "loadView" and "return view." .. kind .. " { ... } " or "") .. "end")
        else
          P.warn("warning: " .. place .. name .. "." .. step .. " is a " .. type(value) .. ", so it is never called: a lifecycle step is a method (function "
            .. name .. ":" .. step .. "() ... end)")
        end
      end
    end
    for _, key in ipairs(names) do
      -- Said at the line that defines the method.
      local info = getinfo(rawget(class, key), "S")
      local where = info and info.linedefined > 0 and info.short_src .. ":" .. info.linedefined .. ": " or ""
      local step = P.resembles(key, LIFECYCLE)
      if step and not ownWord(key, step) then
        P.warn("warning: " .. where .. nameOf(class) .. ":" .. key .. " is not a lifecycle step, so it is never called as one; did you mean '" .. step .. "'?")
      end
      local callback = not step and P.resembles(key, CALLBACKS)
      if callback and not ownWord(key, callback) then
        P.warn("warning: " .. where .. nameOf(class) .. ":" .. key .. " is not called by a selectable list or table; did you mean '" .. callback .. "'?")
      end
    end
    class = rawget(class, "__base")
  end
end

-- "file:line: " of the code `level` calls up from the caller of this, for a warning said later
-- (when a queued push, pop or command runs) at the line that asked for it.
local function callerPlace(level)
  local info = getinfo(level + 1, "Sl")
  return info and info.currentline > 0 and info.short_src .. ":" .. info.currentline .. ": " or ""
end

local nextId = 0
local function instantiate(classOrInstance, args, caller)
  if state[classOrInstance] then return classOrInstance, false end
  if rawequal(classOrInstance, app) then error(caller .. ": call it with '.', as " .. caller .. "(Controller), not ':'", 3) end
  if not isClass(classOrInstance) then
    error(caller .. ": expected a controller class or instance, got " .. type(classOrInstance), 3)
  end
  if args ~= nil and type(args) ~= "table" then
    error(caller .. ": args must be a table (init(args) receives it), got " .. type(args) .. "; e.g. " .. caller .. "(" .. nameOf(classOrInstance)
      .. ", { item = item })", 3)
  end
  checkLifecycleNames(classOrInstance)
  instantiated = true
  nextId = nextId + 1
  local self = setmetatable({ children = {} }, classOrInstance)
  state[self] = {
    id = nextId, args = args or {}, lifetime = P.scope(classOrInstance.__name),
    appearance = nil, visible = false, loaded = false, deallocated = false,
    commands = {}, commandOrder = {}, keys = {}, keyOrder = {},
  }
  return self, true
end

-- The methods of a view component: self.view:update{...} meant one of its components.
local COMPONENT_METHODS = { update = true, set = true, apply = true, find = true, select = true }

-- init, loadView, viewDidLoad, once per instance.
local function load(self)
  local st = state[self]
  if st.loaded then return end
  st.loaded = true
  P.setScope(st.lifetime)
  call(self, "init", st.args)
  local f = self.loadView
  if type(f) == "function" then
    local ok, root = xpcall(f, handlerFor(self, "loadView"), self)
    if not ok then
      P.report(root, "error in " .. nameOf(self) .. ":loadView")
    elseif root == nil then
      -- A loadView that builds a view but does not return it shows nothing: said where it is.
      local info = getinfo(f, "S")
      local where = info and info.linedefined > 0 and info.short_src .. ":" .. info.linedefined .. ": " or ""
      P.warn("warning: " .. where .. nameOf(self) .. ":loadView returned nothing, so " .. nameOf(self) .. " shows no view: return it (return view.text { ... })")
    else
      if tostring(root):sub(1, 6) ~= "<view." then
        -- Named at the method's own line: the wrong value is returned there.
        local info = getinfo(f, "S")
        local where = info and info.linedefined > 0 and info.short_src .. ":" .. info.linedefined .. ": " or ""
        -- With a traceback, as an error raised in loadView has one: loadView has returned, so
        -- its frame is written in at its line, above the load's own (the host's) frames.
        local frames = traceback("", 1):gsub("^.-stack traceback:", "", 1)
        local shown = where ~= "" and "\n\t" .. where .. "in method '" .. nameOf(self) .. ":loadView' (which returned it)" or ""
        P.report(where .. nameOf(self) .. ":loadView must return a view component (view.text, view.stack, ...), got " .. type(root)
          .. "\nstack traceback:" .. shown .. frames, "error in " .. nameOf(self) .. ":loadView")
      else
        st.root = root
        -- A missing id (the view was built with another) is named with the ids it has.
        local name = nameOf(self)
        self.view = setmetatable({ root = root }, { __newindex = function(_, id)
          -- An id the view does not have points at no component to update: the ids are named.
          if type(id) ~= "string" or root:find(id) == nil then
            local ids = P.viewIds(root)
            local closest = type(id) == "string" and P.resembles(id, ids)
            error("self.view." .. tostring(id) .. " = ... sets nothing: self.view holds the view's components by id, and "
              .. name .. "'s view has no component with id '" .. tostring(id) .. "' (ids: " .. (#ids > 0 and concat(ids, ", ") or "none")
              .. (closest and "; did you mean '" .. closest .. "'?" or "") .. "); give a component an id to reach it", 2)
          end
          error("self.view." .. tostring(id) .. " = ... does not replace a component: update it (self.view." .. tostring(id)
            .. ":update { ... }) or set its fields (self.view." .. tostring(id) .. ".text = ...)", 2)
        end, __index = function(_, id)
          local found = root:find(id)
          if found == nil and COMPONENT_METHODS[id] then
            error("self.view holds the view's components by id, so self.view:" .. id .. "(...) calls no component: write self.view.<id>:" .. id
              .. "(...) (ids: " .. (#P.viewIds(root) > 0 and concat(P.viewIds(root), ", ") or "none") .. "), or self.view.root:" .. id .. "(...)", 2)
          end
          if found == nil and type(id) == "string" and id:sub(1, 2) ~= "__" then
            local ids = P.viewIds(root)
            local closest = P.resembles(id, ids)
            error("no component with id '" .. id .. "' in " .. name .. "'s view (ids: " .. (#ids > 0 and concat(ids, ", ") or "none")
              .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
          end
          return found
        end })
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

local keyHints   -- below, with the keys

-- The title line: the titles of the controllers on the stack that set `self.title`.
local function titleLine()
  local titles = {}
  for _, c in ipairs(stack) do
    local title = rawget(c, "title")
    if title ~= nil then titles[#titles + 1] = tostring(title) end
  end
  return concat(titles, " › ")
end

local function present()
  local top = stack[#stack]
  P.setDepth(#stack)
  if top then P.present(state[top].root, nameOf(top), keyHints(top), titleLine()) else P.present(nil, "", "", "") end
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

-- The deepest the navigation stack goes: a controller that pushes another of its class from a
-- lifecycle step (viewDidLoad) would otherwise push forever, growing the stack without a word.
local MAX_DEPTH = 100
local pendingPushes = 0

-- "T ×99, Menu": the classes on the stack from the top, repeats counted.
local function stackNames()
  local parts, last, count = {}, nil, 0
  local function flush()
    if last then parts[#parts + 1] = count > 1 and last .. " ×" .. count or last end
  end
  for i = #stack, 1, -1 do
    local name = nameOf(stack[i])
    if name == last then count = count + 1 else flush(); last, count = name, 1 end
  end
  flush()
  return concat(parts, ", ")
end

local function pushStep(self)
  return function()
    pendingPushes = pendingPushes - 1
    local below = stack[#stack]
    if not below then P.willLoadFirst() end
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

function app.push(classOrInstance, args, ...)
  tooMany("app.push(Controller[, args])", "a controller and args (optional)", 2, ...)
  local self, fresh = instantiate(classOrInstance, args, "app.push")
  if not fresh and state[self].loaded then error("app.push: this controller is already in use", 2) end
  if #stack + pendingPushes >= MAX_DEPTH then
    error("app.push: the navigation stack is " .. MAX_DEPTH .. " controllers deep (" .. stackNames() .. "); a controller that pushes "
      .. "from a lifecycle step (init, loadView, viewDidLoad, viewWillAppear, viewDidAppear) pushes again each time it is pushed: "
      .. "push from a command, a key or a handler, or pop (app.pop()) before pushing", 2)
  end
  pendingPushes = pendingPushes + 1
  enqueue(pushStep(self))
  return self
end

function app.pop(...)
  tooMany("app.pop()", "none", 0, ...)
  local where = callerPlace(2)
  enqueue(function()
    local top = remove(stack)
    if not top then
      P.warn("warning: " .. where .. "app.pop(): no controller to pop (the stack is empty: app.push(Controller) shows one)")
      return
    end
    local below = stack[#stack]
    willDisappear(top)
    if below then willAppear(below) end
    didDisappear(top)
    if below then didAppear(below) end
    dealloc(top)
  end)
end

function app.replace(classOrInstance, args, ...)
  tooMany("app.replace(Controller[, args])", "a controller and args (optional)", 2, ...)
  local self = instantiate(classOrInstance, args, "app.replace")
  enqueue(function()
    local old = remove(stack)
    if not old then P.willLoadFirst() end
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

function app.route(pattern, class, ...)
  tooMany("app.route(pattern, Controller)", "a pattern and a controller class", 2, ...)
  if type(pattern) ~= "string" then error("bad argument #1 to 'app.route' (pattern string expected, got " .. type(pattern) .. ")", 2) end
  if not isClass(class) then error("bad argument #2 to 'app.route' (controller class expected, got " .. type(class) .. ")", 2) end
  local parts, params = {}, {}
  for part in pattern:gmatch("[^/]+") do
    if part:sub(1, 1) == ":" then
      -- `goods/:` matched and gave init no argument; `a/:id/:id` kept only the last.
      local param = part:sub(2)
      if param == "" then
        error("bad argument #1 to 'app.route' (the parameter at part " .. #parts + 1 .. " of '" .. pattern
          .. "' has no name, so init(args) would get nothing for it: name it, as in 'goods/:id' for args.id)", 2)
      end
      if params[param] then
        error("bad argument #1 to 'app.route' (the parameter ':" .. param .. "' is in '" .. pattern
          .. "' twice, so args." .. param .. " would hold only the last part: give each its own name)", 2)
      end
      params[param] = true
    end
    parts[#parts + 1] = part
  end
  local place = callerPlace(2)
  for i, route in ipairs(routes) do
    if route.pattern == pattern then
      -- The first route of a pattern won, so a second one was never used: the newest now wins
      -- (a script loaded again routes anew), and the script hears of the first.
      P.warn("warning: " .. place .. "app.route(\"" .. pattern .. "\", " .. nameOf(class) .. ") replaces the route of '" .. pattern
        .. "' to " .. nameOf(route.class) .. (route.place ~= "" and " made at " .. route.place:sub(1, -3) or "")
        .. "; app.open of a path it matches now pushes " .. nameOf(class))
      routes[i] = { pattern = pattern, parts = parts, class = class, place = place }
      return
    end
  end
  routes[#routes + 1] = { pattern = pattern, parts = parts, class = class, place = place }
end

function app.open(path, args, ...)
  if type(path) ~= "string" then error("bad argument #1 to 'app.open' (path string expected, got " .. type(path) .. ")", 2) end
  if args ~= nil and type(args) ~= "table" then
    error("bad argument #2 to 'app.open' (args must be a table, merged into the route's parameters for init(args), got " .. type(args)
      .. "; e.g. app.open(\"" .. path .. "\", { from = \"list\" }))", 2)
  end
  tooMany("app.open(path[, args])", "a path and args (optional)", 2, ...)
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
  -- The path most likely meant: a route of as many parts whose fixed parts are each the
  -- path's or close to it (`good/42` for `goods/:id` gives `goods/42`).
  local known, meant = {}, nil
  for _, route in ipairs(routes) do
    known[#known + 1] = route.pattern
    if not meant and #route.parts == #parts then
      local fixed = {}
      for i, part in ipairs(route.parts) do
        if part:sub(1, 1) == ":" or part == parts[i] or P.resembles(parts[i], { part }) then
          fixed[i] = part:sub(1, 1) == ":" and parts[i] or part
        else fixed = nil break end
      end
      if fixed then meant = concat(fixed, "/") end
    end
  end
  error("app.open: no route matches '" .. path .. "' (routes: " .. (#known > 0 and concat(known, ", ") or "none")
    .. (meant and "; did you mean '" .. meant .. "'?" or "") .. ")", 2)
end

-- The host's own fields of app, read through __index so that a write to one is refused rather
-- than shadowing it for every later read (a script's own fields take other names).
local appArgs = rawget(app, "args")
rawset(app, "args", nil)
local HOST_FIELDS = {
  top = "the controller shown; app.push(C) shows one and app.pop() removes it",
  stack = "a copy of the navigation stack; app.push, app.pop and app.replace change it",
  args = "the script's arguments (as arg[1...]); its items can be changed (app.args[1] = ...)",
}

setmetatable(app, {
  __newindex = function(t, key, value)
    local what = HOST_FIELDS[key]
    if what then
      error("cannot set 'app." .. key .. "': it is " .. what .. "; keep the script's own fields in app under other names", 2)
    end
    rawset(t, key, value)
  end,
  __index = function(_, key)
    if key == "top" then return stack[#stack] end
    if key == "args" then return appArgs end
    if key == "stack" then
      local copy = {}
      for i, c in ipairs(stack) do copy[i] = c end
      return copy
    end
    -- A misspelled function (app.pushh) is named with the closest one; any other name reads nil,
    -- as a script may keep its own fields in app.
    if type(key) ~= "string" or key:sub(1, 2) == "__" then return nil end
    local names = { "args", "stack", "top" }
    for name in next, app do if type(name) == "string" then names[#names + 1] = name end end
    local closest = P.resembles(key, names)
    if closest then
      sort(names)
      error("no function 'app." .. key .. "' (app: " .. concat(names, ", ") .. "; did you mean '" .. closest .. "'?)", 2)
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
local commandsRunner = nil

-- The pending commands, a queue: taking the first moves nothing (a remote client's 10,000 keys
-- are run in linear time, not by table.remove's shifting of the rest).
local pendingCommands = { first = 1, last = 0 }
local function queueCommand(command)
  pendingCommands.last = pendingCommands.last + 1
  pendingCommands[pendingCommands.last] = command
end
local function nextCommand()
  local first = pendingCommands.first
  if first > pendingCommands.last then return nil end
  local command = pendingCommands[first]
  pendingCommands[first] = nil
  pendingCommands.first = first + 1
  return command
end

local convertArgs, checkArity   -- below, with self:command

-- Why `name` is no command of the top controller `top` (its commands and the closest), or nil
-- when it is one.
local function unknownCommand(top, name)
  if name == "quit" or name == "exit" or name == "help" then return nil end
  local st = state[top]
  if st.commands[name] then return nil end
  -- The names on the first line: a remote `crescent send` and the live status line show only
  -- that; the help of each follows for stdin and the REPL.
  local names = { "help", "quit" }
  for i, command in ipairs(st.commandOrder) do insert(names, i, command) end
  -- `q`, the key that quits elsewhere, typed on the open command line.
  local closest = name == "q" and "quit" or P.resembles(name, names)
  return "unknown command '" .. name .. "'; commands of " .. nameOf(top) .. ": " .. concat(names, ", ")
    .. (closest and "; did you mean '" .. closest .. "'?" or "") .. "\n" .. commandList(top)
end

-- A command's `done(ok, message)`, when it has one (remote control's send), hears how it went.
local function dispatch(name, args, count, done, where)
  local top = stack[#stack]
  -- `exit` is quit's alias unless the controller has a command of that name (its own wins, as
  -- its keys win over the default keys); `quit` always quits.
  if name == "quit" or (name == "exit" and not (top and state[top].commands.exit)) then
    done(true)
    return app.exit(0)
  end
  if not top then
    local message = "no controller to receive '" .. name .. "' (app.push(Controller) shows one that takes commands)"
    P.warn(where and "warning: " .. where .. message or message)
    return done(false, message, true)
  end
  local st = state[top]
  local command = st.commands[name]
  if name == "help" and not command then
    print("commands of " .. nameOf(top) .. ":\n" .. commandList(top))
    return done(true)
  end
  if not command then
    local message = unknownCommand(top, name)
    -- app.send's (queued behind other commands): said at the script's line that sent it
    -- (stdin's and a remote's have none).
    P.warn(where and where ~= "" and "warning: " .. where .. message or message)
    return done(false, message, true)
  end
  local converted, convertedCount = convertArgs(name, command, args, count)
  if converted and not command.args then converted, convertedCount = checkArity(name, top, command.method, converted, convertedCount) end
  if not converted then
    P.warn(where and where ~= "" and "warning: " .. where .. convertedCount or convertedCount)
    return done(false, convertedCount, true)
  end
  P.setScope(scopeOf(top))
  local ok, err = call(top, command.method, table.unpack(converted, 1, convertedCount))
  P.setScope(P.scriptScope)
  -- The third value: the host's own output has said it (call reported the error).
  done(ok, not ok and "error in " .. nameOf(top) .. ":" .. command.method .. ": " .. tostring(err) or nil, not ok)
end

local function ignore() end
local dispatchKey, dispatchChange   -- below, with the keys

-- The task of that coroutine, and the command it runs: a Ctrl-C on the terminal stops them.
local commandsTask, runningCommand = nil, nil

local function runCommands()
  if commandsRunner and coroutine.status(commandsRunner) ~= "dead" then return end
  commandsTask = P.within(P.scriptScope, spawn, function()
    commandsRunner = coroutine.running()
    while true do
      local command = nextCommand()
      if not command then break end
      runningCommand = command
      local done = command.done or ignore
      -- The host's busy indicator names what runs (on the whole terminal only).
      if command.changed then P.busy("click") elseif command.key then P.busy("key", command.key) else P.busy("command", command.name) end
      -- A command that never finishes (its task cancelled, the host exiting) is not a success.
      local ok, err
      if command.changed then ok, err = pcall(dispatchChange, command.changed, done)
      elseif command.key then
        local remote = command.remote
        local lineWasOpen = remote and P.commandLineOpen()
        ok, err = pcall(dispatchKey, command.key, done, command.where, remote)
        -- The line this key opened (groceries' `a`) takes the request's next keys.
        if remote then remote.ownsLine = P.commandLineOpen() and (remote.ownsLine or not lineWasOpen) end
      else ok, err = pcall(dispatch, command.name, command.args, command.count, done, command.where) end
      if not ok then
        done(false, "the command did not finish: " .. tostring(err))
        error(err, 0)
      end
    end
    runningCommand = nil
    P.busy()
    commandsRunner = nil
  end)
end

-- Ctrl-C on the terminal stopped the running key or command: its task is cancelled and the keys
-- and commands that waited behind it are dropped (a remote sender hears so). Returns how many.
local function stopCommands()
  local dropped = 0
  while true do
    local command = nextCommand()
    if not command then break end
    dropped = dropped + 1
    if command.done then command.done(false, "not run: ctrl-c on the terminal stopped the command before it") end
  end
  local task, current = commandsTask, runningCommand
  commandsRunner, commandsTask, runningCommand = nil, nil, nil
  if current and current.done then current.done(false, "stopped by ctrl-c on the terminal") end
  if task and not task.done then task:cancel() end
  P.busy()
  return dropped
end

local function send(done, name, where, ...)
  queueCommand({ name = name, args = { ... }, count = select("#", ...), done = done, where = where })
  runCommands()
  return true
end

function app.send(name, ...)
  if type(name) ~= "string" then error("bad argument #1 to 'app.send' (command name string expected, got " .. type(name) .. ")", 2) end
  -- With no command running or queued, the command reaches the controller on top now: a name it
  -- does not have is an error the script sees at its line, not a warning and true. (Queued
  -- behind others, it may reach a controller pushed meanwhile, so it is checked when it runs.)
  local top = stack[#stack]
  if top and not commandsRunner and pendingCommands.first > pendingCommands.last then
    local unknown = unknownCommand(top, name)
    if unknown then error("app.send: " .. unknown, 2) end
  end
  return send(nil, name, callerPlace(2), ...)
end

-- "qty: integer?" -> { name = "qty", type = "integer", optional = true }
local ARG_TYPES = { string = true, integer = true, number = true, boolean = true }
local function parseArgs(args)
  if args == nil then return nil end
  if type(args) ~= "table" then error("bad argument #4 to 'command' (options.args must be a list like { \"item: string\", \"qty: integer?\" }, got " .. type(args) .. ")", 3) end
  local parsed = {}
  for i, spec in ipairs(args) do
    local argName, argType, optional = tostring(spec):match("^%s*([%w_]+)%s*:%s*(%a+)(%??)%s*$")
    if not argName or not ARG_TYPES[argType] then
      local typed = tostring(spec):match(":%s*(%a+)")
      local closest = typed and P.resembles(typed, { "string", "integer", "number", "boolean" })
      error("bad argument #4 to 'command' (options.args[" .. i .. "] must read \"name: type\" with a type of string, integer, number or boolean, and ? when optional; got " .. tostring(spec)
        .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 3)
    end
    parsed[i] = { name = argName, type = argType, optional = optional == "?" }
  end
  return parsed
end

-- self:command and self:key bind on an instance: a class (C:command in the script's body) or a
-- value given by `.` for `:` is named, at the caller's line.
local function onInstance(self, signature, example)
  if state[self] ~= nil then return end
  if isClass(self) then
    error(signature .. ": call it on an instance, as " .. example .. " in viewDidLoad, not on the class " .. nameOf(self), 3)
  end
  error(signature .. ": call it with ':' on the controller (" .. example .. "), got " .. type(self) .. " as self", 3)
end

local COMMAND_OPTIONS = { "args", "complete" }
function Controller:command(name, method, help, options)
  onInstance(self, "self:command(name, method[, help][, options])", "self:command(...)")
  if type(name) ~= "string" or not name:match("^[%w_%-]+$") then
    error("bad argument #1 to 'command' (a command name of letters, digits, _ or -, got " .. tostring(name) .. ")", 2)
  end
  if name == "quit" then
    error("bad argument #1 to 'command' ('quit' always quits the app, so a command of that name would never run; choose another name)", 2)
  end
  if type(method) ~= "string" then
    error("self:command(name, method[, help][, options]): argument #2 must be the name of a method of " .. nameOf(self)
      .. " that runs the command, got " .. type(method) .. " (as self:command(\"" .. name .. "\", \"" .. name .. "\"))", 2)
  end
  if type(self[method]) ~= "function" then error("command '" .. name .. "': " .. noMethod(self, method), 2) end
  if options ~= nil and type(options) ~= "table" then error("bad argument #4 to 'command' (options table expected, got " .. type(options) .. ")", 2) end
  options = options or {}
  for key in pairs(options) do
    if key ~= "args" and key ~= "complete" then
      local closest = type(key) == "string" and P.resembles(key, COMMAND_OPTIONS)
      error("bad argument #4 to 'command' (unknown option '" .. tostring(key) .. "' (options: args, complete)"
        .. (closest and "; did you mean '" .. closest .. "'?" or "") .. ")", 2)
    end
  end
  if options.complete ~= nil and type(options.complete) ~= "function" then
    error("bad argument #4 to 'command' (options.complete must be a function(argIndex, prefix), got " .. type(options.complete) .. ")", 2)
  end
  -- The args are parsed before anything is registered: a command whose options are refused
  -- leaves no half-registered entry behind for `help` and the command list to trip on.
  local args = parseArgs(options.args)
  local st = state[self]
  local place = callerPlace(2)
  local bound = st.commands[name]
  if not bound then st.commandOrder[#st.commandOrder + 1] = name end
  -- Bound again, as self:key does: the second replaced the first without a word. The same line
  -- binding it again (in viewWillAppear) is no mistake.
  if bound and bound.place ~= place and place ~= "" and bound.place ~= "" then
    P.warn("warning: " .. place .. "self:command(\"" .. name .. "\", \"" .. method .. "\") binds the command '" .. name
      .. "' again, replacing its binding to '" .. bound.method .. "' made at " .. bound.place:sub(1, -3)
      .. ": bind each command once, or give this one another name")
  end
  st.commands[name] = { method = method, help = help or "", args = args, complete = options.complete, place = place }
end

-- The arguments of a command with declared args, converted to their types; nil and a message
-- naming the argument when one does not fit.
-- A command without declared args passes its words to the method: more words than the method
-- has parameters were dropped without a word (greet Ada Lovelace ran greet("Ada")).
function checkArity(name, top, method, args, count)
  local f = top[method]
  local info = type(f) == "function" and getinfo(f, "u")
  -- The first parameter is the controller (a method declared without it takes no words either).
  if not info or info.isvararg or count <= math.max(info.nparams - 1, 0) then return args, count end
  -- `function C.del(x)`: x takes the controller, so the method seems to take one word too few.
  local first = info.nparams > 0 and getlocal(f, 1)
  if first and first ~= "self" then
    local class = nameOf(top)
    local params = {}
    for i = 1, info.nparams do params[i] = getlocal(f, i) end
    return nil, "command '" .. name .. "': " .. class .. "." .. method .. " was defined with '.', so its first parameter '" .. first
      .. "' gets the controller, not the command's first word: define it with ':' (function " .. class .. ":" .. method .. "("
      .. concat(params, ", ") .. "))"
  end
  local names = {}
  for i = 2, info.nparams do names[#names + 1] = getlocal(f, i) end
  return nil, "command '" .. name .. "': " .. nameOf(top) .. ":" .. method .. " takes " .. #names .. " argument" .. (#names == 1 and "" or "s")
    .. (#names > 0 and " (" .. concat(names, ", ") .. ")" or "") .. ", got " .. count .. " (quote an argument with spaces: \"Ada Lovelace\")"
end

function convertArgs(name, command, args, count)
  local declared = command.args
  if not declared then return args, count end
  if count > #declared then
    -- A word too many is a mistake (a quoting slip: add oat milk for add "oat milk"), not dropped.
    local shown = {}
    for i, arg in ipairs(declared) do shown[i] = arg.name .. ": " .. arg.type .. (arg.optional and "?" or "") end
    return nil, "command '" .. name .. "': takes " .. #declared .. " argument" .. (#declared == 1 and "" or "s") .. " (" .. concat(shown, ", ")
      .. "), got " .. count .. " (quote an argument with spaces: \"oat milk\")"
  end
  local converted = {}
  for i, arg in ipairs(declared) do
    local value = args[i]
    if value == nil then
      if not arg.optional then return nil, "command '" .. name .. "': missing argument #" .. i .. " '" .. arg.name .. "' (" .. arg.type .. ")" end
    elseif type(value) == "string" and arg.type ~= "string" then
      local v
      if arg.type == "integer" then v = math.tointeger(tonumber(value))
      elseif arg.type == "number" then v = tonumber(value)
      elseif value == "true" or value == "false" then v = value == "true" end
      if v == nil then
        -- After a string argument the word is likely the rest of it (add oat milk): say to quote.
        local before = declared[i - 1]
        local joined = before and before.type == "string" and type(args[i - 1]) == "string" and args[i - 1] .. " " .. value
        return nil, "command '" .. name .. "': argument #" .. i .. " '" .. arg.name .. "' must be " .. (arg.type == "integer" and "an " or "a ") .. arg.type .. ", got '" .. value .. "'"
          .. (joined and " (if '" .. joined .. "' is one " .. before.name .. ", quote it: " .. name .. " \"" .. joined .. "\")" or "")
      end
      converted[i] = v
    else
      converted[i] = value
    end
  end
  return converted, #declared
end

---------------------------------------------------------------------------------------------------
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

local function checkKey(key, caller, position, level)
  if isKeyName(key) then return end
  local shown, hint
  if type(key) == "string" then
    shown = shownKey(key)
    local closest = closestKey(key)
    hint = closest and "; did you mean '" .. closest .. "'?" or ""
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

-- The status line's hints: each key with its help (the method's name when the help is long).
function keyHints(self)
  local st = state[self]
  local hints = {}
  for _, entry in ipairs(keyEntries(self)) do
    local key, help = entry[1], entry[2]
    if key ~= "ctrl-c" then
      local binding = st.keys[key]
      if binding and #help > 16 then help = binding.method end
      hints[#hints + 1] = key .. " " .. help
    end
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
function dispatchKey(key, done, where, remote)
  if key == "ctrl-c" then
    done(true)
    return app.exit(130)
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
    return app.exit(0)
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
function dispatchChange(change, done)
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
  for i = 1, count do checkKey(keys[i], caller, i, 3) end
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

---------------------------------------------------------------------------------------------------
-- What a controller owns

-- A handler given as a method name runs that method as a task of the controller.
-- A method name becomes a function that runs the method as a task per call; with `latest`, a
-- call cancels the task of the call before while it is still running.
local function handler(self, h, latest)
  if type(h) ~= "string" then return h end
  local name = h
  if type(self[name]) ~= "function" then error(noMethod(self, name), 3) end
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

-- The helpers check what they are given before handing it on, so a wrong value is named at the
-- script's line with the helper's signature ("self:start(service[, options]): argument #1 must
-- be a service ..."), not inside this file ("bad argument #2 to 'within'"). Each check runs in
-- the helper itself: level 3 is the script's line.
local function shown(value)
  if type(value) == "string" then return "string '" .. (#value > 40 and value:sub(1, 40) .. "..." or value) .. "'" end
  return type(value)
end
local function helperSelf(self, signature)
  if state[self] == nil then
    error(signature .. ": call it with ':' on the controller (self:" .. signature:sub(6) .. "), got " .. shown(self) .. " as self", 3)
  end
  -- A controller kept past its pop (`saved = self`): named at the script's call, with the call.
  if state[self].deallocated then
    error(signature .. ": " .. nameOf(self) .. " was deallocated (popped or replaced; what its helpers started ended with it): "
      .. "use the controller shown (app.top), or the global form (timer.after, on, observe) for what must outlive it", 3)
  end
end
local function checkHandler(self, signature, position, h)
  local kind = type(h)
  if kind ~= "function" and kind ~= "string" and kind ~= "table" then
    error(signature .. ": argument #" .. position .. " must be a function or the name of a method of " .. nameOf(self)
      .. ", got " .. shown(h), 3)
  end
end
-- The value is checked here too, not left to timer.after/every: their error named a function
-- the author did not call, and no line of the author's.
local function checkSeconds(signature, seconds, repeats)
  if type(seconds) ~= "number" then
    error(signature .. ": argument #1 must be a number of seconds, got " .. shown(seconds), 3)
  end
  if seconds ~= seconds or seconds < 0 or seconds == math.huge then
    error(signature .. ": argument #1 must be a finite number of seconds >= 0, got " .. (seconds ~= seconds and "nan (0/0)" or tostring(seconds)), 3)
  end
  if repeats and seconds == 0 then
    error(signature .. ": argument #1: an interval of 0 s would never let the loop rest; use a positive number", 3)
  end
end
-- `service.start`/`service.stop`, or the error for a value that is no service that starts.
local function startable(service, method, signature)
  if type(service) ~= "userdata" then
    error(signature .. ": argument #1 must be a service, such as services.location, got " .. shown(service), 3)
  end
  local ok, f = pcall(function() return service[method] end)
  if not ok or type(f) ~= "function" then
    error(signature .. ": " .. tostring(service) .. " has no " .. method .. "(): only a service that runs on its own "
      .. "starts and stops, such as services.location", 3)
  end
  return f
end

-- The global on/observe name an unknown event or property; called from inside `within` their
-- error would carry no line, so it is raised again at the helper's caller. Called as
-- `return (located(pcall(...)))`, not as a tail call: level 3 is then the script's line.
local function located(ok, ...)
  if ok then return ... end
  local message = ...
  -- A place inside this file (`owned`'s "the controller was deallocated") gives way to the script's.
  if type(message) == "string" then error((message:gsub("^%[crescent controllers%]:%d+: ", "", 1)), 3) end
  error(message, 0)
end

function Controller:observe(object, key, h, options)
  local signature = "self:observe(object, key, handler[, options])"
  helperSelf(self, signature)
  if type(object) ~= "userdata" and type(object) ~= "table" then
    error(signature .. ": argument #1 must be a service or model object, such as services.location, got " .. shown(object), 2)
  end
  checkHandler(self, signature, 3, h)
  return (located(pcall(owned, self, observe_, object, key, handler(self, h, wantsLatest(options)), methodOptions(h, options))))
end
function Controller:on(name, h, options)
  local signature = "self:on(event, handler[, options])"
  helperSelf(self, signature)
  if type(name) ~= "string" then
    error(signature .. ": argument #1 must be an event name such as \"location.didUpdateLocations\", got " .. shown(name), 2)
  end
  checkHandler(self, signature, 2, h)
  return (located(pcall(owned, self, on_, name, handler(self, h, wantsLatest(options)), methodOptions(h, options))))
end
-- self:after and self:every: timer.after/every owned by the controller, taking a method name.
local function timerHelper(name, start)
  local signature = "self:" .. name .. "(seconds, handler)"
  return function(self, seconds, h, ...)
    helperSelf(self, signature)
    checkSeconds(signature, seconds, name == "every")
    checkHandler(self, signature, 2, h)
    tooMany(signature, "seconds and a handler", 2, ...)
    return owned(self, start, seconds, handler(self, h))
  end
end
Controller.after = timerHelper("after", after_)
Controller.every = timerHelper("every", every_)
function Controller:task(fn, ...)
  helperSelf(self, "self:task(fn, ...)")
  checkHandler(self, "self:task(fn, ...)", 1, fn)
  return owned(self, task_, handler(self, fn), ...)
end
-- The service's own error (an unknown option) is raised again at the script's line, as
-- `services.location:start{...}` called from a script is.
function Controller:start(service, options)
  helperSelf(self, "self:start(service[, options])")
  return (located(pcall(owned, self, startable(service, "start", "self:start(service[, options])"), service, options)))
end
function Controller:stop(service)
  helperSelf(self, "self:stop(service)")
  return (located(pcall(owned, self, startable(service, "stop", "self:stop(service)"), service)))
end

---------------------------------------------------------------------------------------------------
-- Composition

-- How deep children may nest: each level costs a few C calls (loadView and the appearance run
-- under xpcall), and Lua's C stack overflows a few dozen levels on; no view nests deeper.
local MAX_CHILD_DEPTH = 16

function Controller:addChild(classOrInstance, slotId)
  -- A controller adding its own class as a child as it appears nests without end: named at the
  -- call before the child is made, rather than as a C stack overflow somewhere inside.
  local depth, root, sameClass, overflowed = 1, self, true, state[self] and state[self].childOverflow
  local newClass = isClass(classOrInstance) and classOrInstance or getmetatable(classOrInstance)
  while root.parent and depth < MAX_CHILD_DEPTH do
    if getmetatable(root) ~= newClass then sameClass = false end
    depth = depth + 1
    root = root.parent
    overflowed = overflowed or (state[root] and state[root].childOverflow)
  end
  -- Said once: each appearance forwarded down the chain would add (and refuse) a child again.
  if overflowed then return nil end
  if depth >= MAX_CHILD_DEPTH then
    if getmetatable(root) ~= newClass then sameClass = false end
    local node = self
    while node do
      if state[node] then state[node].childOverflow = true end
      if node == root then break end
      node = node.parent
    end
    error("addChild: children nest " .. MAX_CHILD_DEPTH .. " controllers deep (" .. nameOf(root) .. " > … > " .. nameOf(self) .. ")"
      .. (sameClass and "; " .. nameOf(self) .. " adds its own class as a child each time one appears, without end: "
        .. "a controller cannot hold itself; add a different class, or stop adding at the depth you need"
        or ": add children only as deep as the view needs"), 2)
  end
  local child = instantiate(classOrInstance, nil, "addChild")
  local st = state[self]
  if child.parent then error("addChild: the child already has a parent", 2) end
  child.parent = self
  self.children[#self.children + 1] = child
  load(child)
  if slotId ~= nil then
    local slot = st.root and st.root:find(slotId)
    if not slot then
      -- The ids there are, and the closest (the message named none).
      local ids = st.root and P.viewIds(st.root) or {}
      local closest = type(slotId) == "string" and P.resembles(slotId, ids)
      error("addChild: " .. nameOf(self) .. "'s view has no view.slot with id '" .. tostring(slotId) .. "' (ids: "
        .. (#ids > 0 and concat(ids, ", ") or "none") .. (closest and "; did you mean '" .. closest .. "'?" or "")
        .. (closest and "" or "): give the view a view.slot { id = \"" .. tostring(slotId) .. "\" } to show the child in")
        .. (closest and ")" or ""), 2)
    end
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
  -- A line typed on the command line (the terminal's, the REPL's `:`): as app.send, but a name
  -- the top controller does not have is a message when it runs, not an error of a caller.
  sendLine = function(name, ...)
    return send(nil, name, nil, ...)
  end,
  -- app.send whose command, when it has run, calls report(token, ok, message) (remote
  -- control's send answers with how it went; a second report of a token is ignored there).
  sendCommand = function(report, token, name, ...)
    return send(function(ok, message, shown) report(token, ok, message, shown) end, name, nil, ...)
  end,
  -- The keys a terminal (or the remote `key` method) pressed, in order; `report` as above, once
  -- the last has been handled. Unknown names raise, naming the key and the valid names.
  -- A click selected row `index` of component `id`: the top controller's selectionChanged hears
  -- it, in turn with the keys and commands before it.
  selected = function(id, index, item)
    queueCommand({ changed = { id, index, item } })
    runCommands()
  end,
  -- For the terminal's command line: whether the top controller binds `key`, has keys at all,
  -- exists; what Tab offers for argument `index` of `name` (its complete function, else its
  -- declared type's values).
  bindsKey = function(key)
    local top = stack[#stack]
    return top ~= nil and state[top].keys[key] ~= nil
  end,
  hasKeys = function()
    local top = stack[#stack]
    return top ~= nil and #state[top].keyOrder > 0
  end,
  hasController = function() return #stack > 0 end,
  -- The host's wording of an error value its message handlers show (the shim's
  -- CRESCENT_ERROR_TEXT), raised by the running code or by `thread`: a table raised with error()
  -- (without a __tostring) as inspect shows it, at the line that raised it; a nil field read in a method called on a
  -- controller class, with the hint. Nil: the plain message stands.
  errorText = function(value, thread)
    if type(value) == "string" then
      -- Levels from classSelfHint: 1 itself, 2 this function, 3 the handler, 4 the code that
      -- raised (a coroutine's is its level 0).
      local hint = classSelfHint(value, thread and 0 or 4, thread)
      return hint and value .. hint or nil
    end
    if type(value) == "number" then return nil end
    -- A value with its own __tostring (a service's error) is shown by it, as it always was.
    local meta = rawmetatable(value)
    if meta and meta.__tostring then return nil end
    return errorValueMessage(value, thread)
  end,
  -- The note for a run that ended on its own after making controller classes but no controller:
  -- the script forgot app.push, and nothing else would say why it showed nothing. Nil otherwise.
  unshownNote = function()
    if instantiated or #madeClasses == 0 then return nil end
    local first = madeClasses[1]
    local where = first.place and first.place .. ": " or ""
    if #madeClasses == 1 then
      return where .. "controller " .. first.name .. " was made but never pushed, so the run ended without showing it: app.push("
        .. first.name .. ") shows it"
    end
    local names = {}
    for _, class in ipairs(madeClasses) do names[#names + 1] = class.name end
    return where .. "controllers " .. concat(names, ", ") .. " were made but none was pushed, so the run ended without showing one: app.push("
      .. first.name .. ") shows " .. first.name
  end,
  canGoBack = function() return #stack > 1 end,
  completeArgument = function(name, index, prefix)
    local top = stack[#stack]
    local command = top and state[top].commands[name]
    if not command then return {} end
    if command.complete then
      local ok, list = pcall(command.complete, index, prefix)
      if ok and type(list) == "table" then return list end
      -- A Ctrl-C that stopped it is said on the status line as the stop of a handler is.
      if not ok and not P.stopping() then P.warn("command '" .. name .. "': complete failed: " .. tostring(list)) end
      -- A string or nothing returned offered nothing, without a word.
      if ok then
        P.warn("warning: command '" .. name .. "': complete returned " .. (list == nil and "nothing" or "a " .. type(list))
          .. ", not a list of words, so Tab offered nothing: return a table, as return { \"milk\", \"oat milk\" } (an empty one offers nothing)")
      end
      return {}
    end
    local arg = command.args and command.args[index]
    if arg and arg.type == "boolean" then return { "true", "false" } end
    return {}
  end,
  -- The declared name of a command's argument (for a message about it), or nil.
  argumentName = function(name, index)
    local top = stack[#stack]
    local command = top and state[top].commands[name]
    local arg = command and command.args and command.args[index]
    return arg and arg.name
  end,
  stopCommands = stopCommands,
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
  -- is named as an argument of press at the spec's line.
  pressAs = function(caller, ...)
    local sent = sendKeys(nil, caller, nil, ...)
    return sent
  end,
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

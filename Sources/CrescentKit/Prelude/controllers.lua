-- controllers.lua: controllers, their classes and lifecycle; navigation, commands, keys, what a
-- controller owns and composition are its parts (controllers_*.lua), loaded below.
--
-- Written in Lua on a few host primitives (passed as this chunk's argument, out of scripts' reach):
-- scopes (owners that end everything they adopted), setScope/within (which scope owns what Lua
-- code starts), report (a handler error: printed, run fails), warn (a message on stderr that does
-- not fail the run), onTeardown, willLoadFirst (the first controller starts loading: a run on a
-- terminal holds its output from there), setDepth (the navigation stack keeps the run alive),
-- present (the top controller's view and key hints), show (fill a view.slot), keyNames (the keys
-- with word names), showHelp (the `?` text: over the view on a terminal, else printed), helpKey
-- (true when the shown help took a key: scrolled or closed), redraw (ctrl-l), suspend (ctrl-z),
-- commandLineOpen (whether the terminal's `:` line is open), selectionKey (a key's effect on the
-- shown view's selection and focus), busy (which key or command runs, for the terminal's busy
-- indicator), stopping (whether a Ctrl-C is stopping it) and parts (the chunks of the parts).
-- It loads when a run first uses it (controllers_firstuse.lua), as if it had loaded at start.
--
-- Lifecycle, in order: init(args), loadView(), viewDidLoad(), viewWillAppear(), viewDidAppear(),
-- viewWillDisappear(), viewDidDisappear(), dealloc(); each optional, each run inside a task so it
-- may wait on a service. What a controller starts in init/loadView/viewDidLoad ends at dealloc;
-- what it starts while appearing or visible ends after viewDidDisappear. Transitions run one at a
-- time, in the order they were asked for, with UIKit's interleaving: pushing B over A runs
-- B:init, B:loadView, B:viewDidLoad, A:viewWillDisappear, B:viewWillAppear, A:viewDidDisappear,
-- B:viewDidAppear.
local P = ...
local type, error, setmetatable, rawget, tostring, select, pairs, ipairs, next, getmetatable =
  type, error, setmetatable, rawget, tostring, select, pairs, ipairs, next, getmetatable
local xpcall, traceback, getinfo, concat = xpcall, debug.traceback, debug.getinfo, table.concat
-- The real metatable, past a __metatable lock (a service's error model has one).
local rawmetatable = debug.getmetatable

local Controller = {}          -- the base of every controller class
local state = setmetatable({}, { __mode = "k" })   -- controller -> private state
local stack = {}               -- the navigation stack, bottom first
local routes = {}
-- The controllers' internals the parts share: the tables above, the functions below, and what
-- each part adds for the parts after it.
local C = { Controller = Controller, state = state, stack = stack, routes = routes }

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

-- The mistakes part's, set when it has loaded (before any controller code runs).
local handlerFor, checkLifecycleNames

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
C.classPlaces = classPlaces
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
  class.__newindex = C.newField
  class.__tostring = function(self) return name .. "#" .. state[self].id end
  return setmetatable(class, {
    __index = base or Controller,
    __tostring = function() return "controller " .. name end,
  })
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
    local ok, root, extra = xpcall(f, handlerFor(self, "loadView"), self)
    -- `return view.text{…}, view.text{…}`: the second was dropped without a word.
    if ok and extra ~= nil then
      local info = getinfo(f, "S")
      local where = info and info.linedefined > 0 and info.short_src .. ":" .. info.linedefined .. ": " or ""
      P.warn("warning: " .. where .. nameOf(self) .. ":loadView returned more than one value, and a controller shows one view, the first: "
        .. "put them in one, as return view.stack { first, second }")
    end
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
          -- A deallocated controller's view is shown no more: an update to it vanished
          -- without a word. A warning, once: a late callback of a global helper may still
          -- arrive after a pop.
          if st.deallocated and not st.lateViewWarned then
            st.lateViewWarned = true
            P.warn("warning: " .. callerPlace(2) .. "view." .. tostring(id) .. " of " .. name .. ", which was deallocated (popped or replaced): "
              .. "its view is shown no more, so what changes it shows nothing; change the controller shown (app.top), or start what "
              .. "changes the view with its helpers (self:after, self:on, self:observe), which end with it")
          end
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
-- The parts

C.isClass, C.nameOf, C.methodNames, C.tooMany, C.noMethod = isClass, nameOf, methodNames, tooMany, noMethod
C.call, C.scopeOf, C.owned, C.callerPlace, C.instantiate = call, scopeOf, owned, callerPlace, instantiate
C.load, C.willAppear, C.didAppear, C.willDisappear, C.didDisappear, C.dealloc =
  load, willAppear, didAppear, willDisappear, didDisappear, dealloc

-- The parts, in order: each takes what the ones before it added to C, and returns its functions
-- for the host.
local hooks = {}
for _, part in ipairs({ "mistakes", "navigation", "commands", "keys", "helpers" }) do
  for name, f in pairs(P.parts[part](P, C) or {}) do hooks[name] = f end
end
handlerFor, checkLifecycleNames = C.handlerFor, C.checkLifecycleNames
local errorValueMessage, classSelfHint, instanceMethodHint = C.errorValueMessage, C.classSelfHint, C.instanceMethodHint

---------------------------------------------------------------------------------------------------
-- Teardown: at exit every visible controller disappears, then all are deallocated, top first

P.onTeardown(function()
  for i = #stack, 1, -1 do
    local c = stack[i]
    willDisappear(c)
    didDisappear(c)
  end
  for i = #stack, 1, -1 do dealloc(stack[i]) end
  for i = #stack, 1, -1 do stack[i] = nil end
  P.setDepth(0)
end)

---------------------------------------------------------------------------------------------------
-- For the host: its hooks into the controllers (the parts' and these)

-- The host's wording of an error value its message handlers show (the shim's
-- CRESCENT_ERROR_TEXT), raised by the running code or by `thread`: a table raised with error()
-- (without a __tostring) as inspect shows it, at the line that raised it; a nil field read in a method called on a
-- controller class, with the hint; a misspelled method called on a controller instance, with the
-- method it resembles. Nil: the plain message stands.
function hooks.errorText(value, thread)
  if type(value) == "string" then
    -- Levels from classSelfHint: 1 itself, 2 this function, 3 the handler, 4 the code that
    -- raised (a coroutine's is its level 0).
    local hint = classSelfHint(value, thread and 0 or 4, thread) or instanceMethodHint(value, thread and 0 or 4, thread)
      or C.constructorHint(value, thread and 0 or 4, thread)
    return hint and value .. hint or nil
  end
  if type(value) == "number" then return nil end
  -- A value with its own __tostring (a service's error) is shown by it, as it always was.
  local meta = rawmetatable(value)
  if meta and meta.__tostring then return nil end
  return errorValueMessage(value, thread)
end
-- The note for a run that ended on its own after making controller classes but no controller:
-- the script forgot app.push, and nothing else would say why it showed nothing. Nil otherwise.
function hooks.unshownNote()
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
end
return hooks

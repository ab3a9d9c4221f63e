-- controllers_mistakes.lua: how a controller's mistakes are worded (part of controllers.lua).
--
-- The message handler of a controller's own code (the method it resembles, self.view before it
-- exists, a method defined with '.'), error values that are not strings, and the warning for a
-- method spelled like a lifecycle step but not one. Loaded by controllers.lua with its host
-- primitives `P` and the controllers' shared internals `C`; adds to `C` what the other parts use.
local P, C = ...
local type, setmetatable, rawget, rawset, tostring, ipairs, next, getmetatable = type, setmetatable, rawget, rawset, tostring, ipairs, next, getmetatable
local traceback, getinfo, getlocal, sort, inspect_ = debug.traceback, debug.getinfo, debug.getlocal, table.sort, inspect
local isClass, nameOf, methodNames, classPlaces = C.isClass, C.nameOf, C.methodNames, C.classPlaces

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

-- What a method called on the class (`C:refresh()` after `app.push(C)`) is told: the one home of
-- the wording for both the error's hint and the missing field's warning.
function C.classSelfNote(class, method)
  local name = nameOf(class)
  method = method or "method"
  return "self is the class " .. name .. " here, which has no view or state of its own: app.push(" .. name
    .. ") shows an instance of it, app.top, so call app.top:" .. method .. "(...) where " .. name .. ":" .. method .. "(...) was written"
end

-- `C:refresh()` reading `self.count`: the field is the instance's, so the class reads nil without
-- a word (an index of that nil is the error below, with the note). The base's __index, reached
-- when neither an instance nor its classes have the name: read by a script's method whose self
-- is a class, it is warned once per place. The frame that read is level 2 (the lookups along
-- the tables add no frame), and a miss in an instance's read has the instance as its self, so
-- correct scripts pay one getlocal per missing field read and hear nothing. `__watchOnly` tells
-- the host's method lookups (a delegate's events) that this __index answers no name.
local classReadWarned = {}
setmetatable(C.Controller, { __watchOnly = true, __index = function(_, key)
  if type(key) ~= "string" or key == "view" or key:sub(1, 2) == "__" then return nil end
  local name, self = getlocal(2, 1)
  if name ~= "self" or not isClass(self) then return nil end
  local info = getinfo(2, "Sln")
  if not info or info.what == "C" or info.short_src:sub(1, 9) == "[crescent" or info.currentline <= 0 then return nil end
  local place = info.short_src .. ":" .. info.currentline
  if classReadWarned[place] then return nil end
  classReadWarned[place] = true
  P.warn("warning: " .. place .. ": self." .. key .. " reads nil: " .. C.classSelfNote(self, info.name))
  return nil
end })

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
      return "; " .. C.classSelfNote(value, info.name)
    end
  end
  return nil
end

-- The first non-nil answer of `hint(value)` for the locals and temporaries of the first Lua
-- frame from `level` (of `thread`, else of the running code); nil when none answers.
local function fromFrameLocals(level, thread, hint)
  for at = level, level + 3 do
    local info
    if thread then info = getinfo(thread, at, "S") else info = getinfo(at, "S") end
    if not info then return nil end
    if info.what ~= "C" then
      -- Bounded: a Lua frame has at most 255 registers.
      for slot = 1, 255 do
        local local_, value
        if thread then local_, value = getlocal(thread, at, slot) else local_, value = getlocal(at, slot) end
        if not local_ then return nil end
        local found = hint(value)
        if found then return found end
      end
      return nil
    end
  end
  return nil
end

-- "attempt to call a nil value (method 'ad')" where the object is a controller instance called
-- from outside its methods (the main chunk, a timer, a task, a remote eval, a spec: `app.top:ad()`):
-- the hint naming the method it resembles, as a method's own handler words it. The object is a
-- local or a temporary of the frame that raised: a method call keeps it in the slot after the
-- nil it called. Nil when none resembles.
local function instanceMethodHint(message, level, thread)
  local name = message:match("attempt to call a nil value %(method '([%w_]+)'%)$")
  if not name then return nil end
  return fromFrameLocals(level, thread, function(value)
    if type(value) == "table" and not isClass(value) and isClass(getmetatable(value)) then
      local closest = P.resembles(name, methodNames(value, true))
      if closest then return "; did you mean '" .. closest .. "' (a method of " .. nameOf(value) .. ")?" end
    end
  end)
end

-- `C.new()`: a constructor as other class libraries have one. The hint for "attempt to call a
-- nil value (field 'new')" when a local of the frame that raised is a controller class lacking
-- it; nil otherwise.
local CONSTRUCTORS = { new = true, create = true, alloc = true }
local function constructorHint(message, level, thread)
  local name = message:match("attempt to call a nil value %(%a+ '([%w_]+)'%)$")
  if not name or not CONSTRUCTORS[name] then return nil end
  return fromFrameLocals(level, thread, function(value)
    if isClass(value) and rawget(value, name) == nil then
      return "; a controller class has no " .. name .. ": app.push(" .. nameOf(value) .. "[, args]) makes an instance and shows it "
        .. "(init(args) gets args), and app.top is the one shown"
    end
  end)
end
C.constructorHint = constructorHint

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
      -- `function C:stop()` hides the helper self:stop(service): the method is found first, so
      -- every helper call of that name (here or in a base) runs it, and the error, if any, comes
      -- from a place that never meant it.
      if type(rawget(C.Controller, key)) == "function" then
        local suggested = "handle" .. key:sub(1, 1):upper() .. key:sub(2)
        P.warn("warning: " .. where .. nameOf(class) .. ":" .. key .. " hides the controller helper self:" .. key .. "(...), so each self:"
          .. key .. "(...) of " .. nameOf(class) .. " calls this method instead of the helper: give the method another name (e.g. '"
          .. suggested .. "')")
      end
      local callback = not step and P.resembles(key, CALLBACKS)
      if callback and not ownWord(key, callback) then
        P.warn("warning: " .. where .. nameOf(class) .. ":" .. key .. " is not called by a selectable list or table; did you mean '" .. callback .. "'?")
      end
    end
    class = rawget(class, "__base")
  end
end

-- `self.titel = "Groceries"`: title is the one field the host reads from a controller, and a
-- name a letter or two from it showed no title without a word. An instance's __newindex: it runs
-- for a field's first write only (later ones find it there), so the check costs nothing after.
-- Said once per line: each push of the class writes the field anew.
local TITLE, titleWarned = { "title" }, {}
local function newField(self, key, value)
  rawset(self, key, value)
  if type(key) == "string" and #key >= 4 and #key <= 6 and key ~= "title" and (type(value) == "string" or type(value) == "number")
      and rawget(self, "title") == nil and P.resembles(key, TITLE) then
    -- Level 2: the code that assigned (a metamethod has no frame between).
    local place = C.callerPlace(2)
    if titleWarned[place] then return end
    titleWarned[place] = true
    P.warn("warning: " .. place .. nameOf(self) .. " sets self." .. key .. ", which nothing reads: the title line shows self.title; "
      .. "did you mean 'title'?")
  end
end

C.errorValueMessage, C.classSelfHint, C.instanceMethodHint, C.handlerFor, C.newField =
  errorValueMessage, classSelfHint, instanceMethodHint, handlerFor, newField
C.LIFECYCLE, C.isStep, C.checkLifecycleNames = LIFECYCLE, isStep, checkLifecycleNames

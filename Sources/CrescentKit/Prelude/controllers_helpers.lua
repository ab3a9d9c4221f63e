-- controllers_helpers.lua: what a controller owns (self:observe, self:on, self:after, self:every,
-- self:task, self:start, self:stop) and composition (self:addChild, self:removeChild); part of
-- controllers.lua, loaded by it with its host primitives `P` and shared internals `C`.
local P, C = ...
local type, error, tostring, select, pairs, ipairs, getmetatable = type, error, tostring, select, pairs, ipairs, getmetatable
local remove, concat = table.remove, table.concat
-- `spawn` runs the controllers' own code as tasks whose spawned programs belong to the
-- controller; `task_` is the script's task (self:task), whose spawned programs end with it.
local spawn, task_, observe_, on_, after_, every_ = P.methodTask, task, observe, on, timer.after, timer.every
local Controller, state = C.Controller, C.state
local isClass, nameOf, tooMany, noMethod, call, scopeOf, owned, instantiate =
  C.isClass, C.nameOf, C.tooMany, C.noMethod, C.call, C.scopeOf, C.owned, C.instantiate
local load, willAppear, didAppear, willDisappear, didDisappear, dealloc =
  C.load, C.willAppear, C.didAppear, C.willDisappear, C.didDisappear, C.dealloc

-- What a controller owns

-- A handler given as a method name runs that method as a task of the controller.
-- A method name becomes a function that runs the method as a task per call; with `latest`, a
-- call cancels the task of the call before while it is still running.
-- With `timed` (self:every, self:after), the method's boolean is ignored as timer.every's
-- callback's is, and said so by the same warning (its argument is the timer).
local function handler(self, h, latest, timed)
  if type(h) ~= "string" then return h end
  local name = h
  if type(self[name]) ~= "function" then error(noMethod(self, name), 3) end
  local current
  return function(...)
    local st = state[self]
    if not st or st.deallocated then return end
    if latest and current and not current.done then current:cancel() end
    local args, count = { ... }, select("#", ...)
    current = owned(self, spawn, function()
      local ok, value = call(self, name, table.unpack(args, 1, count))
      if timed and ok and type(value) == "boolean" then P.timerValueIgnored(args[1], value) end
    end)
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
  if type(message) == "string" then error((message:gsub("^%[crescent controllers[%w_]*%]:%d+: ", "", 1)), 3) end
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
    return owned(self, start, seconds, handler(self, h, false, true))
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

-- controllers_navigation.lua: the navigation stack, push/pop/replace, routes and app's own fields
-- (part of controllers.lua, loaded by it with its host primitives `P` and shared internals `C`).
local P, C = ...
local type, error, setmetatable, rawget, rawset, tostring, pairs, ipairs, next =
  type, error, setmetatable, rawget, rawset, tostring, pairs, ipairs, next
local remove, concat, sort, spawn = table.remove, table.concat, table.sort, P.methodTask
local state, stack, routes = C.state, C.stack, C.routes
local isClass, nameOf, tooMany, callerPlace, instantiate = C.isClass, C.nameOf, C.tooMany, C.callerPlace, C.instantiate
local load, willAppear, didAppear, willDisappear, didDisappear, dealloc =
  C.load, C.willAppear, C.didAppear, C.willDisappear, C.didDisappear, C.dealloc

-- Navigation: transitions run one at a time, as a task owned by the script

local queue, running = {}, false

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
  if top then P.present(state[top].root, nameOf(top), C.keyHints(top), titleLine()) else P.present(nil, "", "", "") end
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
        -- `args.idd` for the route's `:id` read nil without a word: a name close to one the
        -- args have (and not one of them) is an error listing them. Another name reads nil,
        -- as an optional argument app.open did not give does.
        local pattern = route.pattern
        setmetatable(params, { __index = function(t, key)
          if type(key) ~= "string" then return nil end
          local names = {}
          for name in pairs(t) do if type(name) == "string" then names[#names + 1] = name end end
          table.sort(names)
          local closest = P.resembles(key, names)
          if closest then
            error("no field '" .. key .. "' in the args of the route '" .. pattern .. "' (fields: " .. concat(names, ", ")
              .. "; did you mean '" .. closest .. "'?)", 2)
          end
          return nil
        end })
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

C.present, C.enqueue = present, enqueue

return {
  canGoBack = function() return #stack > 1 end,
  hasController = function() return #stack > 0 end,
}

-- controllers_commands.lua: commands (target-action): self:command, app.send, the queue that keys
-- and commands wait in, and their arguments (part of controllers.lua, loaded by it with its host
-- primitives `P` and shared internals `C`).
local P, C = ...
local type, error, tostring, select, pairs, ipairs = type, error, tostring, select, pairs, ipairs
local getinfo, getlocal, insert, concat, spawn = debug.getinfo, debug.getlocal, table.insert, table.concat, P.methodTask
local Controller, state, stack = C.Controller, C.state, C.stack
local isClass, nameOf, noMethod, call, scopeOf, callerPlace = C.isClass, C.nameOf, C.noMethod, C.call, C.scopeOf, C.callerPlace

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
local function dispatch(name, args, count, done, where, fromScript)
  local top = stack[#stack]
  -- `exit` is quit's alias unless the controller has a command of that name (its own wins, as
  -- its keys win over the default keys); `quit` always quits.
  if name == "quit" or (name == "exit" and not (top and state[top].commands.exit)) then
    done(true)
    return P.quit(0)
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
  local converted, convertedCount = convertArgs(name, command, args, count, fromScript)
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
      if command.changed then ok, err = pcall(C.dispatchChange, command.changed, done)
      elseif command.key then
        local remote = command.remote
        local lineWasOpen = remote and P.commandLineOpen()
        ok, err = pcall(C.dispatchKey, command.key, done, command.where, remote)
        -- The line this key opened (groceries' `a`) takes the request's next keys.
        if remote then remote.ownsLine = P.commandLineOpen() and (remote.ownsLine or not lineWasOpen) end
      else ok, err = pcall(dispatch, command.name, command.args, command.count, done, command.where, command.fromScript) end
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

-- The end of a run (a spec's test, as its host restarts for the next) drops the keys and commands
-- still waiting and forgets the runner its tasks' end stopped: the next test of a spec file starts
-- with none pending, and its first command starts a runner of its own.
P.onTeardown(function()
  for i = pendingCommands.first, pendingCommands.last do pendingCommands[i] = nil end
  pendingCommands.first, pendingCommands.last = 1, 0
  commandsRunner, commandsTask, runningCommand = nil, nil, nil
end)

local function send(done, name, where, fromScript, ...)
  queueCommand({ name = name, args = { ... }, count = select("#", ...), done = done, where = where, fromScript = fromScript })
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
    -- An argument that does not fit its declared type is the caller's mistake too: a warning
    -- and true let the script go on as if the command had run.
    local command = state[top].commands[name]
    if command and command.args then
      local converted, message = convertArgs(name, command, { ... }, select("#", ...), true)
      if not converted then error("app.send: " .. message, 2) end
    end
  end
  return send(nil, name, callerPlace(2), true, ...)
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
    for j, earlier in ipairs(parsed) do
      if earlier.name == argName then
        error("bad argument #4 to 'command' (options.args[" .. i .. "] names '" .. argName .. "' again, as options.args[" .. j
          .. "] does: give each argument its own name)", 3)
      end
    end
    -- Words fill the args in order: a required one after an optional one could never be given
    -- without the optional one before it.
    local before = parsed[i - 1]
    if optional ~= "?" and before and before.optional then
      error("bad argument #4 to 'command' (options.args[" .. i .. "] '" .. argName .. "' is required but follows the optional '" .. before.name
        .. "': words fill the arguments in order, so '" .. before.name .. "' could never be left out; put optional arguments last)", 3)
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
  -- The help left out and the options put 3rd: the table was taken as the help text (`help`
  -- then failed inside the host) and its args dropped. DESIGN's signature puts help 3rd.
  if help ~= nil and type(help) ~= "string" then
    error("self:command(name, method[, help][, options]): argument #3 (help) must be a string, got " .. type(help)
      .. (type(help) == "table" and options == nil and ": the options go 4th, after the help text (self:command(\"" .. name
        .. "\", \"" .. method .. "\", \"what it does\", { args = … }))" or ""), 2)
  end
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
  -- Bound again, as self:key does: the second replaced the first without a word. The same
  -- binding made again by the same line (in viewWillAppear) is no mistake; two bindings on one
  -- line are.
  local same = bound and bound.place == place and bound.method == method and bound.help == (help or "")
  if bound and not same and place ~= "" and bound.place ~= "" then
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

-- `fromScript`: app.send's arguments, already separate values, so no hint about quoting words.
function convertArgs(name, command, args, count, fromScript)
  local declared = command.args
  if not declared then return args, count end
  if count > #declared then
    -- A word too many is a mistake (a quoting slip: add oat milk for add "oat milk"), not dropped.
    local shown = {}
    for i, arg in ipairs(declared) do shown[i] = arg.name .. ": " .. arg.type .. (arg.optional and "?" or "") end
    return nil, "command '" .. name .. "': takes " .. #declared .. " argument" .. (#declared == 1 and "" or "s") .. " (" .. concat(shown, ", ")
      .. "), got " .. count .. (fromScript and "" or " (quote an argument with spaces: \"oat milk\")")
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
        local joined = not fromScript and before and before.type == "string" and type(args[i - 1]) == "string" and args[i - 1] .. " " .. value
        return nil, "command '" .. name .. "': argument #" .. i .. " '" .. arg.name .. "' must be " .. (arg.type == "integer" and "an " or "a ") .. arg.type
          .. (arg.type == "boolean" and " (true or false)" or "") .. ", got '" .. value .. "'"
          .. (joined and " (if '" .. joined .. "' is one " .. before.name .. ", quote it: " .. name .. " \"" .. joined .. "\")" or "")
      end
      converted[i] = v
    else
      converted[i] = value
    end
  end
  return converted, #declared
end

C.commandList, C.queueCommand, C.runCommands, C.onInstance = commandList, queueCommand, runCommands, onInstance

return {
  -- A line typed on the command line (the terminal's, the REPL's `:`): as app.send, but a name
  -- the top controller does not have is a message when it runs, not an error of a caller.
  sendLine = function(name, ...)
    return send(nil, name, nil, false, ...)
  end,
  -- app.send whose command, when it has run, calls report(token, ok, message) (remote
  -- control's send answers with how it went; a second report of a token is ignored there).
  sendCommand = function(report, token, name, ...)
    return send(function(ok, message, shown) report(token, ok, message, shown) end, name, nil, false, ...)
  end,
  -- A click selected row `index` of component `id`: the top controller's selectionChanged hears
  -- it, in turn with the keys and commands before it.
  selected = function(id, index, item)
    queueCommand({ changed = { id, index, item } })
    runCommands()
  end,
  -- For the terminal's command line: what Tab offers for argument `index` of `name` (its
  -- complete function, else its declared type's values).
  completeArgument = function(name, index, prefix)
    local top = stack[#stack]
    local command = top and state[top].commands[name]
    if not command then return {} end
    if command.complete then
      local ok, list = pcall(command.complete, index, prefix)
      -- Said at the complete function's own line: the call comes from the host's Tab.
      local info = getinfo(command.complete, "S")
      local where = info and info.linedefined > 0 and info.short_src .. ":" .. info.linedefined .. ": " or ""
      if ok and type(list) == "table" then
        -- `{ "ok", 5, {} }`: the words that are not strings were dropped without a word; said
        -- once per command, and the strings are offered.
        local words, dropped = {}, nil
        for _, word in ipairs(list) do
          if type(word) == "string" then words[#words + 1] = word else dropped = dropped or type(word) end
        end
        if dropped and not command.saidNonStrings then
          command.saidNonStrings = true
          P.warn("warning: " .. where .. "command '" .. name .. "': complete returned a list with a " .. dropped
            .. " in it, and Tab offers only strings, so it was left out: return words, as return { \"milk\", tostring(5) }")
        end
        return dropped and words or list
      end
      -- A Ctrl-C that stopped it is said on the status line as the stop of a handler is.
      if not ok and not P.stopping() then P.warn("command '" .. name .. "': complete failed: " .. tostring(list)) end
      -- A string or nothing returned offered nothing, without a word.
      if ok then
        P.warn("warning: " .. where .. "command '" .. name .. "': complete returned " .. (list == nil and "nothing" or "a " .. type(list))
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
  -- The top controller's command names, then help and quit.
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

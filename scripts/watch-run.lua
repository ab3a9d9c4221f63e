#!/usr/bin/env crescent
-- watch-run.lua: run a command whenever files change, like entr or watchexec. Shows the
-- command's last result and the tail of its output live; `r` (or the `rerun` command: `:rerun` on
-- a terminal, a `rerun` line on piped stdin) runs it again, `q` quits (a `q` line when piped). A
-- change while the command runs is taken for its own writes and ignored, as watchexec does. When
-- the watched folder is removed, it says so and watches again once the folder is back.
--   crescent scripts/watch-run.lua -- make test
--   crescent scripts/watch-run.lua --path src --glob '*.lua' -- crescent test
--   crescent scripts/watch-run.lua --shell -- 'make && ./app'
local usage = "usage: watch-run.lua [--path FOLDER] [--glob PATTERN] [--lines N] [--shell] -- COMMAND [ARGS...]"
local process, files = services.process, services.files

local path, glob, lines, shell, command = ".", nil, 15, false, {}
local i = 1
while i <= #arg do
  local word = arg[i]
  if word == "--" then
    table.move(arg, i + 1, #arg, 1, command)
    break
  elseif word == "--path" or word == "--glob" or word == "--lines" then
    i = i + 1
    if arg[i] == nil then io.stderr:write(usage, "\n") return app.exit(2) end
    if word == "--path" then path = arg[i] elseif word == "--glob" then glob = arg[i] else lines = tonumber(arg[i]) or lines end
  elseif word == "--shell" then
    shell = true
  else
    io.stderr:write(usage, "\n")
    return app.exit(2)
  end
  i = i + 1
end
if #command == 0 then io.stderr:write(usage, "\n") return app.exit(2) end
local shown = table.concat(command, " ")

-- `text` with its control characters shown escaped (`\e`, `\n`, `\x9b`): a file's name or a
-- program's line must not drive the terminal (retitle it, clear it, write the clipboard). Bytes
-- that are not UTF-8 (a file name is bytes) are shown escaped too: a view's text must be UTF-8.
local function visible(text)
  local named = { ["\27"] = "\\e", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ["\\"] = "\\\\" }
  text = text:gsub("[%c\\]", function(c) return named[c] or string.format("\\x%02x", c:byte()) end)
  -- C1 controls (U+0080-U+009F, CSI among them) as UTF-8 encodes them.
  text = text:gsub("\194([\128-\159])", function(c) return string.format("\\x%02x", c:byte()) end)
  local parts, from = {}, 1
  while true do
    local valid, bad = utf8.len(text, from)
    if valid then break end
    parts[#parts + 1] = text:sub(from, bad - 1) .. string.format("\\x%02x", text:byte(bad))
    from = bad + 1
  end
  parts[#parts + 1] = text:sub(from)
  return table.concat(parts)
end

local watching = "watching " .. visible(path) .. (glob and (" (" .. visible(glob) .. ")") or "") .. ": " .. visible(shown)

local WatchRun = controller("WatchRun")

function WatchRun:loadView()
  return view.stack {
    view.text { id = "title", text = watching },
    view.text { id = "status", text = "starting" },
    view.list { id = "output" },
  }
end

function WatchRun:viewDidLoad()
  self.tail, self.runs = {}, 0
  self:command("rerun", "rerun", "run the command again")
  -- `q` quits on a terminal (the default key); piped, the line `q` does what the status says.
  self:command("q", "leave", "quit")
  self:key("r", "rerun", "rerun")
end

function WatchRun:viewWillAppear()
  local watcher, err = self:watch()
  if not watcher then
    -- Nothing to watch (a missing folder, one that cannot be read): say so and end, as entr does.
    io.stderr:write("watch-run.lua: ", visible(tostring(err)), "\n")
    return app.exit(2)
  end
  self:run()
end

function WatchRun:leave()
  app.exit(0)
end

-- Watches the path; nil and the error when it cannot.
function WatchRun:watch()
  local ok, watcher = pcall(files.watch, files, path, { recursive = true, glob = glob })
  if not ok then return nil, watcher end
  self.watcher = watcher
  -- A change that cannot be handled is said on the screen, and the next one is handled again:
  -- a handler that kept failing would be cancelled and leave a screen saying "watching" deaf.
  watcher:on("didChange", function(event)
    local handled, failure = pcall(self.changed, self, event)
    if not handled then
      self.view.status.text = "a change could not be handled (still watching): " .. visible(tostring(failure))
    end
    for _, change in ipairs(event.changes) do
      if change.kind == "deleted" and change.path == watcher.path then self:lost() end
    end
  end)
  return watcher
end

-- The watched folder was removed (or moved away): its watch has ended. Say so instead of a
-- "watching" that hears nothing, and watch again once something is at the path.
function WatchRun:lost()
  if self.retry then return end
  self.view.title.text = "waiting for " .. visible(path) .. " to come back (it was removed): " .. visible(shown)
  self.retry = self:every(0.5, "rewatch")
end

function WatchRun:rewatch()
  if not files:stat(path) then return end
  local watcher = self:watch()
  if not watcher then return end
  self.retry:cancel()
  self.retry = nil
  self.view.title.text = watching
  self.lastChange = visible(path)
  if self.current then self.again = true else self:run() end
end

-- Files changed: run again. Changes while the command runs, and in the moment after it ended
-- (the watch's debounce), are its own writes as far as anyone can tell (a build writing into the
-- folder), so they are ignored, as watchexec does: otherwise such a command reruns itself forever.
function WatchRun:changed(event)
  if self.current or self.settling then return end
  self.lastChange = visible(event.changes[1] and event.changes[1].path or path)
  self:run()
end

function WatchRun:rerun()
  if self.current then self.again = true else self:run() end
end

function WatchRun:run()
  self.runs = self.runs + 1
  self.tail = {}
  self.started = os.time()
  self.view.output:update(self.tail)
  self.view.status.text = "running #" .. self.runs .. (self.lastChange and (" (" .. self.lastChange .. " changed)") or "")
  local argv = shell and table.concat(command, " ") or command
  local started, current = pcall(process.spawn, process, argv, { shell = shell })
  if not started then
    -- A missing program is this run's result, not a run that never ends.
    self.view.status.text = string.format("#%d failed: %s  (:rerun runs it again, q quits)", self.runs, visible(tostring(current)))
    return
  end
  self.current = current
  current:on("didOutput", function(out)
    self.tail[#self.tail + 1] = (out.stream == "stderr" and "! " or "") .. visible(out.line)
    if #self.tail > lines then table.remove(self.tail, 1) end
    self.view.output:update(self.tail)
  end)
  current:on("didExit", function(result) self:ended(result) end)
end

function WatchRun:ended(result)
  self.current = nil
  self.settling = true
  timer.after(0.3, function() self.settling = false end)
  local outcome = result.error and ("not started: " .. result.error)
    or result.status == 0 and "ok" or (result.signal and ("killed by " .. result.signal) or ("exit " .. tostring(result.status)))
  self.view.status.text = string.format("#%d %s in %ds at %s  (:rerun runs it again, q quits)", self.runs, outcome,
    os.time() - self.started, os.date("%H:%M:%S"))
  if self.again then
    self.again = false
    self:run()
  end
end

app.push(WatchRun)

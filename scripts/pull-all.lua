#!/usr/bin/env crescent
-- pull-all.lua: automation that does not block. Finds every git repository in a folder (the
-- folder itself and the folders in it), runs `git pull --ff-only` in each, several at once,
-- and shows a live table of their states and each one's last line of output; once all have
-- ended, prints the summary and each repository that is not up to date (the table goes with the
-- screen on a terminal); exits 0 when every pull succeeded, 1 otherwise. `q` (or ctrl-c) stops the
-- pulls still running and prints the summary all the same; `--timeout` ends a pull that hangs.
--   crescent scripts/pull-all.lua ~/src
--   crescent scripts/pull-all.lua --jobs 8 --timeout 120 ~/src
local usage = "usage: pull-all.lua [--jobs N] [--timeout SECONDS] [FOLDER]"
local process, files = services.process, services.files

local root, jobs, timeout = ".", 4, 300
local rootGiven = false
local i = 1
while i <= #arg do
  local word = arg[i]
  if word == "--jobs" or word == "--timeout" then
    i = i + 1
    local number = tonumber(arg[i])
    if not number or number < 1 then io.stderr:write(usage, "\n") return app.exit(2) end
    if word == "--jobs" then jobs = math.floor(number) else timeout = number end
  elseif word:sub(1, 2) == "--" then
    io.stderr:write(usage, "\n")
    return app.exit(2)
  elseif rootGiven then
    -- One folder: a second one was silently ignored.
    io.stderr:write("pull-all.lua: one FOLDER only (got '", word, "' after '", root, "')\n", usage, "\n")
    return app.exit(2)
  else
    root, rootGiven = word, true
  end
  i = i + 1
end
root = root:gsub("(.)/+$", "%1")

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

local PullAll = controller("PullAll")

function PullAll:loadView()
  return view.stack {
    view.text { id = "title", text = "git pull in " .. visible(root) },
    view.table { id = "repos", columns = { "repository", "state", { key = "last", title = "last line" } } },
    view.text { id = "summary" },
  }
end

function PullAll:viewDidLoad()
  self.rows, self.queue, self.running, self.failed = {}, {}, 0, 0
  -- `q` stops the pulls and quits (a `q` line when piped), as ctrl-c does; the summary stays.
  self:key("q", "leave", "stop and quit")
  self:command("q", "leave", "stop the pulls and quit")
  self:task(function() self:start() end)
end

function PullAll:leave()
  self:reportStopped()
  app.exit(1)
end

-- Ctrl-c, SIGTERM, SIGHUP: the app is going away.
function PullAll:viewWillDisappear()
  self:reportStopped()
end

-- A run ended before every pull did: the pulls still running are killed with the app, and the
-- summary is printed all the same, those pulls named as stopped.
function PullAll:reportStopped()
  if self.reported or #self.rows == 0 then return end
  for _, row in ipairs(self.rows) do
    if row.state == "pulling" or row.state == "waiting" then row.state = "stopped while " .. row.state end
  end
  self:show()
  self:report()
end

-- The repositories: the root when it is one, and each folder in it that is one.
function PullAll:findRepositories()
  local found = {}
  if files:stat(root .. "/.git") then found[#found + 1] = root end
  local names, err = files:list(root)
  if err then return nil, err end
  for _, name in ipairs(names) do
    local path = root .. "/" .. name
    if name:sub(1, 1) ~= "." and files:stat(path .. "/.git") then found[#found + 1] = path end
  end
  return found
end

function PullAll:start()
  local repos, err = self:findRepositories()
  if not repos then
    io.stderr:write("pull-all.lua: ", visible(err.message), "\n")
    return app.exit(2)
  end
  if #repos == 0 then
    print("pull-all.lua: no git repository in " .. visible(root))
    return app.exit(0)
  end
  for index, path in ipairs(repos) do
    self.rows[index] = { path = path, repository = visible(path), state = "waiting", last = "" }
    self.queue[#self.queue + 1] = index
  end
  self:show()
  self:next()
end

-- Starts waiting pulls until `jobs` run; once none runs or waits, reports and exits. A pull that
-- cannot start (no `git` in PATH, a folder the system refuses) is a failed row with the reason,
-- so the run still ends.
function PullAll:next()
  while self.running < jobs and #self.queue > 0 do
    local index = table.remove(self.queue, 1)
    local row = self.rows[index]
    row.state = "pulling"
    self.running = self.running + 1
    -- Started from the first task or from a pull's end: the controller owns them, not that task
    -- (a program spawned in a task that returns is killed with it).
    local started, pull = pcall(process.spawn, process, { "git", "-C", row.path, "pull", "--ff-only" },
                                { timeout = timeout, env = { GIT_TERMINAL_PROMPT = "0" }, outliveTask = true })
    if started then
      pull:on("didOutput", function(out)
        if out.line ~= "" then row.last = visible(out.line) self:show() end
      end)
      pull:on("didExit", function(result) self:finished(row, result) end)
    else
      self.running = self.running - 1
      self.failed = self.failed + 1
      row.state, row.last = "not started", visible(tostring(pull))
    end
  end
  self:show()
  if self.running == 0 and #self.queue == 0 and not self.reported then
    self:report()
    app.exit(self.failed == 0 and 0 or 1)
  end
end

function PullAll:finished(row, result)
  self.running = self.running - 1
  if result.error then
    -- git was found but could not start (its exec failed): said as a spawn that failed.
    self.failed = self.failed + 1
    row.state, row.last = "not started", visible(result.error)
  elseif result.status == 0 then
    row.state = row.last:find("Already up to date", 1, true) and "up to date" or "updated"
  else
    self.failed = self.failed + 1
    row.state = result.timedOut and "timed out" or (result.signal and ("killed (" .. result.signal .. ")") or ("failed (" .. result.status .. ")"))
  end
  self:next()
end

-- On a terminal the live table goes with the app's screen as it exits, and what was printed is
-- written out then: the summary, and each repository that did not end up to date with its last
-- line, stay in the scrollback (a failure's reason above all).
function PullAll:report()
  self.reported = true
  print("pull-all.lua: " .. self.view.summary.text)
  for _, row in ipairs(self.rows) do
    if row.state ~= "up to date" then print("  " .. row.repository .. ": " .. row.state .. (row.last ~= "" and (": " .. row.last) or "")) end
  end
end

function PullAll:show()
  self.view.repos:update(self.rows)
  local counts = {}
  for _, row in ipairs(self.rows) do counts[row.state] = (counts[row.state] or 0) + 1 end
  local parts = {}
  for _, state in ipairs({ "waiting", "pulling", "up to date", "updated" }) do
    if counts[state] then parts[#parts + 1] = counts[state] .. " " .. state end
  end
  if self.failed > 0 then parts[#parts + 1] = self.failed .. " failed" end
  local stopped = (counts["stopped while pulling"] or 0) + (counts["stopped while waiting"] or 0)
  if stopped > 0 then parts[#parts + 1] = stopped .. " stopped" end
  self.view.summary.text = table.concat(parts, ", ")
end

app.push(PullAll)

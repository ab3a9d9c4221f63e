#!/usr/bin/env crescent
-- top.lua: a live view of the system plugin (a Python process reading /proc): load, memory,
-- uptime, and the busiest processes, refreshed as the plugin reports new readings.
--   crescent scripts/top.lua [FILTER]        (run from the repository, where plugins/ holds it)
local system = services.system
local filter = arg[1]

local Top = controller("Top")

function Top:loadView()
  return view.stack {
    view.keyvalue { id = "summary" },
    view.table { id = "processes", columns = { "pid", "name", "cpu", "memory" } },
  }
end

function Top:viewDidLoad()
  self:command("refresh", "refresh", "read the process list again")
end

function Top:viewWillAppear()
  self:observe(system, "load", "refresh")
  self:observe(system, "memory", "refresh", { initial = false })
end

local function mib(bytes) return ("%.0f MiB"):format(bytes / 1048576) end

function Top:refresh()
  local load, memory = system.load, system.memory
  self.view.summary:update({
    { "load", ("%.2f %.2f %.2f"):format(load.one, load.five, load.fifteen) },
    { "memory", ("%s used of %s"):format(mib(memory.used), mib(memory.total)) },
    { "uptime", ("%.1f h"):format(system.uptime / 3600) },
  })
  local list, err = system:processes(filter)
  if err then
    self.view.summary:update({ { "error", tostring(err) } })
    return
  end
  local rows = {}
  for i = 1, math.min(#list, 10) do
    local p = list[i]
    rows[i] = { pid = p.pid, name = p.name, cpu = ("%.1f s"):format(p.cpu), memory = mib(p.memory) }
  end
  self.view.processes:update(rows)
end

app.push(Top)

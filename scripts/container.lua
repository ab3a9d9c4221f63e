#!/usr/bin/env crescent
-- container.lua: composition. A dashboard holds two child controllers side by side and a third
-- that depends on its state: `state busy` swaps the "idle" child for a "busy" one. Each child
-- owns its own timers and views; the container only coordinates.
--   printf 'state busy\nstate idle\nquit\n' | crescent scripts/container.lua
local Counter = controller("Counter")
function Counter:init() self.label, self.count = "counter", 0 end
function Counter:loadView() return view.keyvalue { id = "value" } end
function Counter:viewWillAppear()
  self.view.value:update({ { self.label, self.count } })
  self:every(0.5, function()
    self.count = self.count + 1
    self.view.value:update({ { self.label, self.count } })
  end)
end

local Idle = controller("Idle")
function Idle:loadView() return view.text("nothing to do") end

local Busy = controller("Busy")
function Busy:loadView() return view.progress { id = "bar", value = 0, total = 10, label = "working" } end
function Busy:viewWillAppear()
  self.done = 0
  self:every(0.2, function()
    self.done = math.min(self.done + 1, 10)
    self.view.bar.value = self.done
  end)
end

local Dashboard = controller("Dashboard")
function Dashboard:loadView()
  return view.stack {
    view.text("Dashboard"),
    view.row { view.slot { id = "left" }, view.slot { id = "right" } },
    view.slot { id = "status" },
  }
end
function Dashboard:viewDidLoad()
  self:addChild(Counter, "left").label = "left"
  self:addChild(Counter, "right").label = "right"
  self.state = "idle"
  self.status = self:addChild(Idle, "status")
  self:command("state", "setState", "state idle|busy: swap the status child")
end
function Dashboard:setState(state)
  if state ~= "idle" and state ~= "busy" then
    print("state must be idle or busy")
    return
  end
  if state == self.state then return end
  self.state = state
  self:removeChild(self.status)
  self.status = self:addChild(state == "busy" and Busy or Idle, "status")
end

app.push(Dashboard)

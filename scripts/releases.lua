#!/usr/bin/env crescent
-- releases.lua: one model, two list controllers. The store holds two collections, demands and
-- services; each list controller shows one and updates its table from the collection's change
-- sets. A second crescent process adding to the same store shows up here within a second.
--   crescent --data-dir /tmp/releases scripts/releases.lua
--   commands: add demand|service TITLE, remove demand|service N, done demand|service N
local List = controller("ReleaseList")

function List:init()
  self.items = services.store:collection(self.collectionName)
end

function List:loadView()
  return view.stack {
    view.text(self.title),
    view.table { id = "table", columns = { "title", "done" }, rows = self.items.items },
  }
end

function List:viewWillAppear()
  self.items:on("didChange", function(changes) self.view.table:apply(changes) end)
end

local function listOf(collectionName, title)
  local class = controller(title, List)
  class.collectionName, class.title = collectionName, title
  return class
end

local Releases = controller("Releases")

function Releases:loadView()
  return view.stack { view.text("Releases"), view.row { view.slot { id = "demands" }, view.slot { id = "services" } } }
end

function Releases:viewDidLoad()
  self.lists = {
    demand = self:addChild(listOf("demands", "Demands"), "demands"),
    service = self:addChild(listOf("services", "Services"), "services"),
  }
  self:command("add", "add", "add demand|service TITLE")
  self:command("remove", "remove", "remove demand|service N")
  self:command("done", "done", "done demand|service N: mark it done")
end

-- The list a command names, or nil after saying what is expected.
function Releases:listNamed(kind)
  local list = self.lists[kind or ""]
  if not list then print("say demand or service, got " .. tostring(kind)) end
  return list
end

function Releases:add(kind, title)
  local list = self:listNamed(kind)
  if not list then return end
  if not title then return print("usage: add " .. kind .. " TITLE") end
  local _, err = list.items:add({ title = title, done = false })
  if err then print(tostring(err)) end
end

-- The record at 1-based position `n` of a list, or nil after saying so.
local function recordAt(list, n)
  local record = list.items.items[tonumber(n) or 0]
  if not record then print("no item " .. tostring(n)) end
  return record
end

function Releases:remove(kind, n)
  local list = self:listNamed(kind)
  local record = list and recordAt(list, n)
  if record then
    local _, err = list.items:remove(record.id)
    if err then print(tostring(err)) end
  end
end

function Releases:done(kind, n)
  local list = self:listNamed(kind)
  local record = list and recordAt(list, n)
  if record then
    local _, err = list.items:update(record.id, { done = true })
    if err then print(tostring(err)) end
  end
end

app.push(Releases)

#!/usr/bin/env crescent
-- groceries.lua: a list controller over an observable collection. The store owns the items; the
-- controller only coordinates: commands call the collection, and the table view applies each
-- change set (inserting or deleting rows) instead of redrawing from scratch.
--   printf 'add milk\nadd "oat milk" 2\nremove 1\nquit\n' | crescent --data-dir /tmp/groceries scripts/groceries.lua
local Groceries = controller("Groceries")

function Groceries:init()
  self.items = services.store:collection("groceries")
end

function Groceries:loadView()
  return view.stack {
    view.text { id = "title", text = "Groceries" },
    view.table { id = "list", columns = { "item", { key = "quantity", title = "qty", align = "right" } } },
    view.text { id = "status" },
  }
end

function Groceries:viewDidLoad()
  self:command("add", "add", "add ITEM [QUANTITY]")
  self:command("remove", "remove", "remove N: remove the Nth item")
  self:command("clear", "clear", "remove every item")
  self.view.list:update(self.items.items)
  self:showCount(self.items.count)
end

function Groceries:showCount(count)
  self.view.status.text = count == 1 and "1 item" or (count .. " items")
end

function Groceries:viewWillAppear()
  self:observe(self.items, "count", "showCount", { initial = false })
  -- Made while appearing, so owned by the controller until it disappears.
  self.items:on("didChange", function(changes) self:changed(changes) end)
end

-- The change set says which rows changed; the table updates just those.
function Groceries:changed(changes)
  self.view.list:apply(changes)
end

function Groceries:add(item, quantity)
  if not item then return print("usage: add ITEM [QUANTITY]") end
  local _, err = self.items:add({ item = item, quantity = tonumber(quantity) or 1 })
  if err then print(tostring(err)) end
end

function Groceries:remove(position)
  local record = self.items.items[tonumber(position) or 0]
  if not record then return print("no item " .. tostring(position)) end
  local _, err = self.items:remove(record.id)
  if err then print(tostring(err)) end
end

function Groceries:clear()
  local _, err = self.items:clear()
  if err then print(tostring(err)) end
end

app.push(Groceries)

#!/usr/bin/env crescent
-- groceries.lua: a list controller over an observable collection. The store owns the items; the
-- controller only coordinates: commands call the collection, and the table view applies each
-- change set (inserting or deleting rows) instead of redrawing from scratch.
--   crescent scripts/groceries.lua           on a terminal: up/down choose, enter opens, a adds
--                                            (a command line with "add "), d deletes (d again
--                                            confirms), q quits
--   printf 'add milk\nadd "oat milk" 2\nremove 1\nquit\n' | crescent --data-dir /tmp/groceries scripts/groceries.lua
local Groceries = controller("Groceries")

-- One item's detail, pushed on enter; esc (or backspace) goes back.
local Item = controller("Item")

function Item:init(args)
  self.record = args.record
  self.title = args.record.item
end

function Item:loadView()
  return view.keyvalue { pairs = { { "item", self.record.item }, { "quantity", self.record.quantity } } }
end

function Groceries:init()
  -- The title line shows it on a terminal; the view does not repeat it.
  self.title = "Groceries"
  self.items = services.store:collection("groceries")
end

function Groceries:loadView()
  return view.stack {
    view.table { id = "list", selectable = true,
      columns = { "item", { key = "quantity", title = "qty", align = "right" } } },
    view.text { id = "status" },
  }
end

function Groceries:viewDidLoad()
  self:key("a", "startAdd", "add")
  self:key("d", "delete", "delete")
  self:command("add", "add", "add ITEM [QUANTITY]", { args = { "item: string", "quantity: integer?" } })
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

-- a: the command line, "add " typed, for the person to finish (`add "oat milk" 2`).
function Groceries:startAdd()
  app.commandLine("add ")
end

-- Enter on a row: its detail.
function Groceries:didSelect(_, _, record)
  app.push(Item, { record = record })
end

-- d asks, d again on the same item deletes it.
function Groceries:delete()
  local record = self.view.list.selectedItem
  if not record then return end
  if self.deleting ~= record.id then
    self.deleting = record.id
    return print("delete " .. record.item .. "? press d again")
  end
  self.deleting = nil
  local _, err = self.items:remove(record.id)
  print(err and tostring(err) or ("deleted " .. record.item))
end

function Groceries:selectionChanged()
  self.deleting = nil
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

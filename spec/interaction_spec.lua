-- Keys, selection, focus and navigation in virtual time, through press() and screen_text()
-- (DESIGN.md "Interaction on a terminal").

local function letters(n)
  local items = {}
  for i = 1, n do items[i] = string.char(96 + i) end
  return items
end

local function rows(n)
  local list = {}
  for i = 1, n do list[i] = { name = "row " .. i, n = i } end
  return list
end

-- A controller showing `component`, recording selectionChanged and didSelect.
local function showing(component, extra)
  local C = controller("Shown")
  C.moves, C.chosen = {}, {}
  function C:loadView() return component() end
  function C:selectionChanged(id, index, item) C.moves[#C.moves + 1] = id .. ":" .. index .. ":" .. tostring(item) end
  function C:didSelect(id, index, item) C.chosen[#C.chosen + 1] = id .. ":" .. index .. ":" .. tostring(item) end
  if extra then extra(C) end
  app.push(C)
  clock.advance(0)
  return C
end

describe("selection", function()
  it("moves with up/down/k/j and scrolls the selected row into view", function()
    local C = showing(function() return view.list { id = "items", selectable = true, items = letters(8) } end)
    press("down", "j", "down", "k", "down")
    clock.advance(0)
    assert.same({ "items:2:b", "items:3:c", "items:4:d", "items:3:c", "items:4:d" }, C.moves)
    assert.equals(4, app.top.view.items.selected)
    assert.equals("d", app.top.view.items.selectedItem)
    -- 20 x 5: four rows of view, then the status line.
    assert.equals("  - a\n  - b\n  - c\n> - d\n? help  q quit", screen_text(20, 5))
    press("down", "down")
    clock.advance(0)
    assert.equals("  - c\n  - d\n  - e\n> - f\n? help  q quit", screen_text(20, 5))
    press("home")
    clock.advance(0)
    assert.equals("> - a\n  - b\n  - c\n  - d\n? help  q quit", screen_text(20, 5))
  end)

  it("pages with pageup and pagedown", function()
    showing(function() return view.list { id = "items", selectable = true, items = letters(20) } end)
    screen_text(20, 6)   -- five rows of view: a page moves four
    press("pagedown")
    clock.advance(0)
    assert.equals(5, app.top.view.items.selected)
    press("pagedown", "pageup")
    clock.advance(0)
    assert.equals(5, app.top.view.items.selected)
  end)

  it("selects the last of 10,000 rows with end", function()
    showing(function()
      return view.table { id = "t", selectable = true, columns = { "name", "n" }, rows = rows(10000) }
    end)
    press("end")
    clock.advance(0)
    assert.equals(10000, app.top.view.t.selected)
    local screen = screen_text(30, 6)
    assert.matches("> row 10000  10000\n", screen)
    assert.matches("^  name", screen)
  end)

  it("keeps the selected item when rows are inserted or removed above it", function()
    local items = { "milk", "bread", "eggs" }
    showing(function() return view.list { id = "items", selectable = true, items = items } end)
    press("down", "down")
    clock.advance(0)
    assert.equals("eggs", app.top.view.items.selectedItem)
    app.top.view.items:apply({ inserted = { 1 }, insertedItems = { "oat milk" } })
    assert.equals(4, app.top.view.items.selected)
    assert.equals("eggs", app.top.view.items.selectedItem)
    app.top.view.items:apply({ deleted = { 1, 2 } })
    assert.equals(2, app.top.view.items.selected)
    assert.equals("eggs", app.top.view.items.selectedItem)
  end)

  it("runs didSelect on enter and moves by component:select", function()
    local C = showing(function() return view.list { id = "items", selectable = true, items = { "x", "y" } } end)
    app.top.view.items:select(2)
    press("enter")
    clock.advance(0)
    assert.same({ "items:2:y" }, C.chosen)
    assert.same({}, C.moves)
    local ok, err = pcall(app.top.view.items.select, app.top.view.items, 3)
    assert.falsy(ok)
    assert.matches("view.list:select%(index%): row 3 does not exist %(rows: 2%)", err)
  end)

  it("moves the focus between selectable components with tab and shift-tab", function()
    local C = showing(function()
      return view.row {
        view.list { id = "left", selectable = true, items = { "l1", "l2" } },
        view.list { id = "right", selectable = true, items = { "r1", "r2" } },
      }
    end)
    press("down", "tab", "down", "shift-tab", "up")
    clock.advance(0)
    assert.same({ "left:2:l2", "right:2:r2", "left:1:l1" }, C.moves)
  end)

  it("lets a bound key override a default", function()
    local C = showing(function() return view.list { id = "items", selectable = true, items = { "x", "y" } } end,
      function(C)
        function C:viewDidLoad() self:key("down", "custom", "my down") end
        function C:custom() C.pressed = true end
      end)
    press("down")
    clock.advance(0)
    assert.truthy(C.pressed)
    assert.same({}, C.moves)
  end)
end)

describe("navigation", function()
  it("pushes a detail on enter, shows the title line, and pops it on esc", function()
    local Detail = controller("Detail")
    function Detail:init(args) self.title = args.item end
    function Detail:loadView() return view.text { text = "about " .. self.title } end
    local List = controller("List")
    function List:init() self.title = "Groceries" end
    function List:loadView() return view.list { id = "items", selectable = true, items = { "milk", "oat milk" } } end
    function List:didSelect(_, _, item) app.push(Detail, { item = item }) end
    app.push(List)
    clock.advance(0)
    press("down", "enter")
    clock.advance(0)
    assert.equals("Groceries › oat milk\nabout oat milk\n\n\nesc back  ? help  q quit", screen_text(40, 5))
    press("esc")
    clock.advance(0)
    assert.equals("Groceries\n  - milk\n> - oat milk\n\n? help  q quit", screen_text(40, 5))
  end)

  it("lists the keys and commands with ?", function()
    local C = controller("Keys")
    function C:loadView() return view.text { text = "hello" } end
    function C:viewDidLoad()
      self:key("r", "refresh", "refresh the list")
      self:command("add", "add", "add ITEM")
    end
    function C:refresh() end
    function C:add() end
    app.push(C)
    clock.advance(0)
    press("?")
    clock.advance(0)
    local screen = screen_text(40, 16)
    assert.matches("keys of Keys:", screen)
    assert.matches("r       refresh the list", screen)
    assert.matches("add   add ITEM", screen)
    assert.matches("r refresh the list  %? help  q quit$", screen)
    press("x")   -- any key closes the help
    clock.advance(0)
    assert.matches("^hello", screen_text(40, 16))
  end)
end)

#!/usr/bin/env crescent
-- news.lua: your feeds, a feed's items and an item's text, kept up to date while it runs. The feeds
-- service owns the fetching, polling and remembering; these controllers subscribe to the URLs
-- given as arguments (feeds added before are remembered) and show `feeds` and `latest` whenever
-- they change.
--   crescent scripts/news.lua https://example.org/feed.xml https://example.org/atom.xml
-- Three levels on a navigation stack: the feeds (each with its items and whether it fails), a
-- feed's items (newest first), an item's text. On a terminal: up/down choose, enter opens, esc goes
-- back, r refreshes (every feed on the first level, the feed shown on the second), q quits.
-- Commands (also one per line of piped stdin): `refresh`, `feed N` (the Nth feed's items); there
-- `open N` (the Nth item's link, with xdg-open on a desktop, else printed), `read N` (its text);
-- on an item's text `open`; `back` on both; `quit`.
local News = controller("News")
local Items = controller("Items")
local Story = controller("Story")

-- How wide a title may be in a table, and the column an item's text is wrapped at.
local titleWidth, textWidth = 60, 72

local function shorten(text, width)
  if utf8.len(text) and utf8.len(text) > width then
    return text:sub(1, utf8.offset(text, width) - 1) .. "…"
  end
  return text
end

local function feedName(feed)
  return feed.title ~= "" and feed.title or feed.url
end

local function itemTitle(item)
  return item.title ~= "" and item.title or (item.summary ~= "" and item.summary or "untitled")
end

local function when(item)
  return item.published and os.date("%Y-%m-%d %H:%M", math.floor(item.published)) or ""
end

-- `text` in lines of at most `width` columns, broken between words (a word longer than a line
-- keeps a line of its own); the text's own line breaks stay.
local function wrap(text, width)
  local lines = {}
  for paragraph in (text .. "\n"):gmatch("(.-)\n") do
    local line = ""
    for word in paragraph:gmatch("%S+") do
      if line == "" then
        line = word
      elseif (utf8.len(line) or #line) + 1 + (utf8.len(word) or #word) <= width then
        line = line .. " " .. word
      else
        lines[#lines + 1] = line
        line = word
      end
    end
    lines[#lines + 1] = line
  end
  return table.concat(lines, "\n")
end

-- Opens an item's link in the desktop's browser when there is one, and prints it.
local function openLink(item)
  if not item.link then return print(itemTitle(item) .. ": no link") end
  local desktop = os.getenv("DISPLAY") or os.getenv("WAYLAND_DISPLAY")
  if desktop and os.execute("command -v xdg-open >/dev/null 2>&1") then
    os.execute("xdg-open '" .. item.link:gsub("'", "'\\''") .. "' >/dev/null 2>&1 &")
  end
  print(itemTitle(item) .. "\n" .. item.link)
end

local function back()
  app.pop()
end

-- The feeds ------------------------------------------------------------------------------------

function News:init(args)
  self.title = "News"
  self.feeds = services.feeds
  self.urls = args or {}
end

function News:loadView()
  return view.stack {
    view.table { id = "list", selectable = true, columns = {
      { key = "n", title = "#", align = "right" }, "feed", { key = "count", title = "items", align = "right" }, "state",
    } },
    view.text { id = "status" },
  }
end

function News:viewDidLoad()
  self:key("r", "refresh", "refresh")
  self:command("refresh", "refresh", "fetch every feed now")
  self:command("feed", "feed", "feed N: the Nth feed's items")
  self:showFeeds(self.feeds.feeds)
  -- Subscribing fetches each feed; its row follows through `feeds`. Made here, not on each
  -- appearance, so coming back from a feed's items subscribes nothing again.
  self.adding = self:task(function()
    for _, url in ipairs(self.urls) do
      -- A failed fetch shows in the feed's row; a URL the service refuses has no row.
      local _, err = self.feeds:add(url)
      if err and err.code == "invalid_argument" then log.warn(tostring(err)) end
    end
  end)
end

function News:viewWillAppear()
  self:observe(self.feeds, "feeds", "showFeeds")
end

function News:showFeeds(feeds)
  local rows, failing = {}, 0
  for i, feed in ipairs(feeds) do
    if feed.lastError then failing = failing + 1 end
    rows[i] = {
      n = i,
      feed = shorten(feedName(feed), titleWidth),
      count = feed.itemCount,
      state = feed.lastError and shorten(feed.lastError.message, titleWidth) or "ok",
    }
  end
  self.list = feeds
  self.view.list:update(rows)
  if #feeds == 0 then
    self.view.status.text = #self.urls > 0 and "subscribing…" or "no feeds yet: give feed URLs as arguments"
    return
  end
  local text = #feeds == 1 and "1 feed" or (#feeds .. " feeds")
  if failing > 0 then text = text .. ", " .. failing .. " failing" end
  self.view.status.text = text
end

-- Waits for the feeds still being added, so a `refresh` typed at once covers them.
function News:waitForAdds()
  while self.adding and not self.adding.done do sleep(0.05) end
end

function News:refresh()
  self:waitForAdds()
  local items, err = self.feeds:refresh()
  if err then return print("refresh: " .. tostring(err)) end
  print(#items == 1 and "1 new item" or (#items .. " new items"))
end

-- Enter on a feed: its items.
function News:didSelect(_, index)
  local feed = self.list and self.list[index]
  if feed then app.push(Items, { feed = feed }) end
end

function News:feed(n)
  self:waitForAdds()
  local feed = self.list and self.list[tonumber(n) or 0]
  if not feed then return print("no feed " .. tostring(n)) end
  app.push(Items, { feed = feed })
end

-- A feed's items -------------------------------------------------------------------------------
-- They are the feed's among the service's `latest` (its 50 newest items across the feeds), so a
-- quiet feed beside busy ones may show fewer than it has; the status line then says how many.

function Items:init(args)
  self.feeds = services.feeds
  self.url = args.feed.url
  self.title = shorten(feedName(args.feed), titleWidth)
end

function Items:loadView()
  return view.stack {
    view.table { id = "list", selectable = true, columns = {
      { key = "n", title = "#", align = "right" }, "when", "title",
    } },
    view.text { id = "status" },
  }
end

function Items:viewDidLoad()
  self:key("r", "refresh", "refresh")
  self:command("refresh", "refresh", "fetch this feed now")
  self:command("open", "open", "open N: open the Nth item's link")
  self:command("read", "read", "read N: the Nth item's text")
  self:command("back", "back", "back to the feeds")
  -- Shown now, not only once it appears: a piped `open 1` right after `feed 1` reaches this
  -- controller while its push is still under way.
  self:showItems(self.feeds.latest)
end

function Items:viewWillAppear()
  self:observe(self.feeds, "latest", "showItems")
  self:observe(self.feeds, "feeds", "showStatus")
end

function Items:showItems(latest)
  local items, rows = {}, {}
  for _, item in ipairs(latest) do
    if item.feed == self.url then
      items[#items + 1] = item
      rows[#items] = { n = #items, when = when(item), title = shorten(itemTitle(item), titleWidth) }
    end
  end
  self.items = items
  self.view.list:update(rows)
  self:showStatus(self.feeds.feeds)
end

function Items:showStatus(feeds)
  local feed
  for _, candidate in ipairs(feeds) do
    if candidate.url == self.url then feed = candidate end
  end
  if not feed then
    self.view.status.text = "no longer subscribed"
    return
  end
  local shown = self.items and #self.items or 0
  local text = feed.itemCount == 1 and "1 item" or (feed.itemCount .. " items")
  if shown < feed.itemCount then text = text .. ", the newest " .. shown .. " shown" end
  if feed.lastError then text = text .. "; failing: " .. feed.lastError.message end
  self.view.status.text = text
end

function Items:refresh()
  local items, err = self.feeds:refresh(self.url)
  if err then return print("refresh: " .. tostring(err)) end
  print(#items == 1 and "1 new item" or (#items .. " new items"))
end

-- Enter on an item: its text.
function Items:didSelect(_, index)
  local item = self.items and self.items[index]
  if item then app.push(Story, { item = item }) end
end

function Items:read(n)
  local item = self.items and self.items[tonumber(n) or 0]
  if not item then return print("no item " .. tostring(n)) end
  app.push(Story, { item = item })
end

function Items:open(n)
  local item = self.items and self.items[tonumber(n) or 0]
  if not item then return print("no item " .. tostring(n)) end
  openLink(item)
end

Items.back = back

-- An item's text -------------------------------------------------------------------------------

function Story:init(args)
  self.item = args.item
  self.title = shorten(itemTitle(args.item), titleWidth)
end

-- The title is the title line's (shortened there when long), so the view starts at the feed.
function Story:loadView()
  local item = self.item
  return view.stack {
    view.text { text = table.concat({ item.feedTitle, when(item) }, "  "):gsub("%s+$", "") },
    view.text { text = item.link or "" },
    view.text { text = "" },
    view.text { text = item.summary ~= "" and wrap(item.summary, textWidth) or "(no text)" },
  }
end

function Story:viewDidLoad()
  self:command("open", "open", "open the item's link")
  self:command("back", "back", "back to the items")
end

function Story:open()
  openLink(self.item)
end

Story.back = back

app.push(News, app.args)

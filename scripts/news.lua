#!/usr/bin/env crescent
-- news.lua: the latest headlines of your feeds, kept up to date while it runs. The feeds service
-- owns the fetching, polling and remembering; this controller subscribes to the URLs given as
-- arguments (feeds added before are remembered) and shows `latest` whenever it changes.
--   crescent scripts/news.lua https://example.org/feed.xml https://example.org/atom.xml
-- Commands: `refresh` fetches every feed now, `open N` opens the Nth headline's link (with
-- xdg-open on a desktop, else it prints the link), `quit`. On a terminal: up/down choose a
-- headline, enter shows its text, esc goes back, r refreshes, q quits.
local News = controller("News")

-- One headline's text, pushed on enter.
local Story = controller("Story")

function Story:init(args)
  self.item = args.item
  self.title = args.item.title ~= "" and args.item.title or "untitled"
end

function Story:loadView()
  local item = self.item
  return view.stack {
    view.text { text = item.feedTitle },
    view.text { text = item.link or "" },
    view.text { text = item.summary ~= "" and item.summary or "(no text)" },
  }
end

-- How many headlines the table shows, and how wide a title may be.
local shown, titleWidth = 15, 60

function News:init(args)
  self.title = "News"
  self.feeds = services.feeds
  self.urls = args or {}
end

function News:loadView()
  return view.stack {
    view.text { id = "title", text = "News" },
    view.table { id = "headlines", selectable = true, columns = {
      { key = "n", title = "#", align = "right" }, "when", "title", "feed",
    } },
    view.text { id = "status" },
  }
end

function News:viewDidLoad()
  self:key("r", "refresh", "refresh")
  self:command("refresh", "refresh", "fetch every feed now")
  self:command("open", "open", "open N: open the Nth headline's link")
end

function News:viewWillAppear()
  self:observe(self.feeds, "latest", "showHeadlines")
  self:observe(self.feeds, "feeds", "showStatus")
  self:on("feeds.didFail", function(failure)
    local name = failure.feed.title ~= "" and failure.feed.title or failure.feed.url
    self.view.status.text = name .. ": " .. failure.error.message
  end)
  -- Subscribing fetches each feed; the headlines follow through `latest`.
  self.adding = self:task(function()
    for _, url in ipairs(self.urls) do
      -- A failed fetch shows through didFail; a URL the service refuses does not.
      local _, err = self.feeds:add(url)
      if err and err.code == "invalid_argument" then log.warn(tostring(err)) end
    end
  end)
end

local function shorten(text, width)
  if utf8.len(text) and utf8.len(text) > width then
    return text:sub(1, utf8.offset(text, width)) .. "…"
  end
  return text
end

function News:showHeadlines(latest)
  local rows = {}
  for i = 1, math.min(shown, #latest) do
    local item = latest[i]
    rows[i] = {
      n = i,
      when = item.published and os.date("%Y-%m-%d %H:%M", math.floor(item.published)) or "",
      title = shorten(item.title ~= "" and item.title or item.summary, titleWidth),
      feed = shorten(item.feedTitle, 24),
    }
  end
  self.latest = latest
  self.view.headlines:update(rows)
end

function News:showStatus(feeds)
  local failing = 0
  for _, feed in ipairs(feeds) do
    if feed.lastError then failing = failing + 1 end
  end
  if #feeds == 0 then
    self.view.status.text = "no feeds yet: give feed URLs as arguments"
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

-- Enter on a headline: its text.
function News:didSelect(_, index)
  local item = self.latest and self.latest[index]
  if item then app.push(Story, { item = item }) end
end

function News:open(n)
  self:waitForAdds()
  local item = self.latest and self.latest[tonumber(n) or 0]
  if not item then return print("no headline " .. tostring(n)) end
  if not item.link then return print(item.title .. ": no link") end
  local desktop = os.getenv("DISPLAY") or os.getenv("WAYLAND_DISPLAY")
  if desktop and os.execute("command -v xdg-open >/dev/null 2>&1") then
    os.execute("xdg-open '" .. item.link:gsub("'", "'\\''") .. "' >/dev/null 2>&1 &")
  end
  print(item.title .. "\n" .. item.link)
end

app.push(News, app.args)

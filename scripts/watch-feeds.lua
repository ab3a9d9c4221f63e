#!/usr/bin/env crescent
-- watch-feeds.lua: automation. Subscribes to the feeds given as arguments and prints each new
-- item as one tab-separated line (published time in UTC, feed title, item title, link), oldest
-- first, until interrupted; errors go to stderr. For a pipe or a log:
--   crescent --ui plain scripts/watch-feeds.lua https://example.org/feed.xml | tee -a news.tsv
--   crescent scripts/watch-feeds.lua --once URL...      one fetch of each feed, then exit
--   crescent scripts/watch-feeds.lua --interval 300 URL...
-- The feeds service remembers what it has seen, so a second run prints only what is new.
local feeds = services.feeds
local usage = "usage: watch-feeds.lua [--once] [--interval SECONDS] URL..."

local once, interval, urls = false, nil, {}
local i = 1
while i <= #arg do
  if arg[i] == "--once" then
    once = true
  elseif arg[i] == "--interval" then
    i = i + 1
    interval = tonumber(arg[i])
    if not interval then io.stderr:write(usage, "\n") return app.exit(2) end
  else
    urls[#urls + 1] = arg[i]
  end
  i = i + 1
end
if #urls == 0 then io.stderr:write(usage, "\n") return app.exit(2) end

-- Only the feeds of this run: the service may also poll feeds added by other scripts.
local watched = {}
for _, url in ipairs(urls) do watched[url] = true end

local function line(item)
  local when = item.published and os.date("!%Y-%m-%dT%H:%M:%SZ", math.floor(item.published)) or "-"
  return table.concat({ when, item.feedTitle, item.title, item.link or "-" }, "\t")
end

feeds:on("didUpdate", function(update)
  if not watched[update.feed.url] then return end
  local items = {}
  for index, item in ipairs(update.newItems) do items[index] = { item = item, index = index } end
  -- Oldest first, as a log reads; undated items keep their place at the end.
  table.sort(items, function(a, b)
    local x, y = a.item.published or math.huge, b.item.published or math.huge
    if x ~= y then return x < y end
    return a.index < b.index
  end)
  for _, entry in ipairs(items) do print(line(entry.item)) end
  io.stdout:flush()
end)

feeds:on("didFail", function(failure)
  if not watched[failure.feed.url] then return end
  -- Name the feed, unless the message already does ("HTTP 404 from URL").
  local message = failure.error.message
  if not message:find(failure.feed.url, 1, true) then message = failure.feed.url .. ": " .. message end
  io.stderr:write("watch-feeds.lua: ", message, "\n")
end)

task(function()
  local failures = 0
  for _, url in ipairs(urls) do
    -- A failed first fetch is reported by didFail; the feed stays subscribed and is retried.
    local _, err = feeds:add(url, interval and { interval = interval } or nil)
    if err and err.code == "invalid_argument" then
      io.stderr:write("watch-feeds.lua: ", err.message, "\n")
      return app.exit(2)
    end
    if err then failures = failures + 1 end
  end
  if once then
    if failures == #urls then app.exit(1) end
    return
  end
  -- The service polls on its own; this wait only keeps the run going until Ctrl-C or SIGTERM.
  while true do sleep(3600) end
end)

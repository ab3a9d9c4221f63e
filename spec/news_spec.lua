-- news.lua over the feeds service, which fetches through the faked http service: the feeds, a
-- feed's items and an item's text, driven with keys as on a terminal.
local function rss(title, items)
  local parts = { '<?xml version="1.0"?>\n<rss version="2.0"><channel><title>' .. title .. '</title><link>https://example.org/</link>' }
  for _, item in ipairs(items) do
    parts[#parts + 1] = ("<item><title>%s</title><link>https://example.org/%s</link><guid>%s</guid>%s</item>")
      :format(item.title, item.id, item.id, item.text and ("<description>" .. item.text .. "</description>") or "")
  end
  parts[#parts + 1] = "</channel></rss>"
  return table.concat(parts, "\n")
end

local first = { id = "1", title = "First headline", text = "The first story, told at some length so that it has to be wrapped "
  .. "on a screen: it goes on past the reading width of seventy-two columns and ends here." }
local second = { id = "2", title = "Second headline" }
local third = { id = "3", title = "Third headline", text = "Just in." }
local RSS = { ["content-type"] = "application/rss+xml" }
local MAIN, OTHER = "https://example.org/feed.xml", "https://example.org/other.xml"

-- The main feed has two items until its `later` fetch, then three; the other feed has one.
local fetches, later
local function serve()
  fetches, later = { main = 0, other = 0 }, false
  fake.http {
    ["GET " .. MAIN] = function()
      fetches.main = fetches.main + 1
      return { status = 200, headers = RSS, body = rss("Example News", later and { first, second, third } or { first, second }) }
    end,
    ["GET " .. OTHER] = function()
      fetches.other = fetches.other + 1
      return { status = 200, headers = RSS, body = rss("Other News", { { id = "9", title = "Elsewhere" } }) }
    end,
  }
end

local function start(...)
  script("scripts/news.lua", ...)
  clock.advance(0)
end

describe("news", function()
  before_each(serve)

  it("lists the feeds given, each with its items", function()
    start(MAIN, OTHER)
    local text = view_text()
    assert.matches("1  Example News%s+2  ok", text)
    assert.matches("2  Other News%s+1  ok", text)
    assert.matches("2 feeds", text)
  end)

  it("shows its title once on the screen", function()
    start(MAIN)
    local screen = screen_text(60, 10)
    local _, count = screen:gsub("News", "")
    assert.equals(2, count, screen)   -- the title line and the feed "Example News"
    assert.matches("^News\n  #  feed", screen)
  end)

  it("goes from the feeds to a feed's items to an item's text on enter, and back on esc", function()
    start(MAIN, OTHER)
    press("enter")
    clock.advance(0)
    local items = screen_text(60, 10)
    assert.matches("^News › Example News\n", items)
    assert.matches("Second headline", items)
    assert.matches("First headline", items)
    assert.not_matches("Elsewhere", items)

    press("down", "enter")
    clock.advance(0)
    local story = screen_text(80, 12)
    assert.matches("^News › Example News › First headline\nExample News\nhttps://example%.org/1\n\nThe first story", story)
    -- Wrapped at the reading width, between words.
    for line in story:gmatch("[^\n]+") do assert.is_true(utf8.len(line) <= 80) end
    assert.matches("\nThe first story, told at some length so that it has to be wrapped on a\nscreen: ", story)

    press("esc")
    clock.advance(0)
    assert.matches("^News › Example News\n", screen_text(60, 10))
    assert.matches(">%s+2%s+First headline", screen_text(60, 10))
    press("esc")
    clock.advance(0)
    assert.equals("News", app.top.title)
    assert.matches(">%s+1%s+Example News", screen_text(60, 10))
  end)

  it("opens the other feed's items from its row", function()
    start(MAIN, OTHER)
    press("down", "enter")
    clock.advance(0)
    local items = screen_text(60, 10)
    assert.matches("^News › Other News\n", items)
    assert.matches(">%s+1%s+Elsewhere", items)
    assert.not_matches("headline", items)
  end)

  it("refreshes every feed with r on the feeds", function()
    start(MAIN, OTHER)
    assert.same({ main = 1, other = 1 }, fetches)
    local printed = spy.on(_G, "print")
    later = true
    press("r")
    clock.advance(0)
    assert.same({ main = 2, other = 2 }, fetches)
    assert.spy(printed).was.called_with("1 new item")
    assert.matches("1  Example News%s+3  ok", screen_text(60, 10))
  end)

  it("refreshes the feed shown with r on its items", function()
    start(MAIN, OTHER)
    press("enter")
    clock.advance(0)
    later = true
    press("r")
    clock.advance(0)
    assert.same({ main = 2, other = 1 }, fetches)
    assert.matches("Third headline", screen_text(60, 10))
    assert.matches("3 items", screen_text(60, 10))
  end)

  it("shows the feeds, a feed's items and an item's text as the golden screens do", function()
    start(MAIN, OTHER)
    assert.view("spec/golden/news.txt")
    assert.view("spec/golden/news-feeds.txt", { width = 80, height = 10 })
    press("enter")
    clock.advance(0)
    assert.view("spec/golden/news-items.txt", { width = 80, height = 10 })
    press("down", "enter")
    clock.advance(0)
    assert.view("spec/golden/news-item.txt", { width = 80, height = 10 })
  end)

  it("goes the same way with commands, as from piped stdin", function()
    start(MAIN, OTHER)
    local printed = spy.on(_G, "print")
    send("feed", "3")
    clock.advance(0)
    assert.spy(printed).was.called_with("no feed 3")
    send("feed", "2")
    clock.advance(0)
    assert.equals("Other News", app.top.title)
    send("open", "1")
    clock.advance(0)
    assert.spy(printed).was.called_with("Elsewhere\nhttps://example.org/9")
    send("read", "1")
    clock.advance(0)
    assert.matches("https://example%.org/9", view_text())
    send("back")
    clock.advance(0)
    send("back")
    clock.advance(0)
    assert.equals("News", app.top.title)
  end)

  it("says which feed fails", function()
    fake.http { ["GET " .. MAIN] = { status = 404, body = "not here" } }
    start(MAIN)
    local text = view_text()
    assert.matches("404", text)
    assert.matches("1 feed, 1 failing", text)
  end)

  it("asks for feeds when none is given", function()
    start()
    assert.matches("no feeds yet", view_text())
  end)
end)

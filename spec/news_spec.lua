-- news.lua over the feeds service, which fetches through the faked http service.
local feed = [[<?xml version="1.0"?>
<rss version="2.0"><channel><title>Example News</title><link>https://example.org/</link>
<item><title>First headline</title><link>https://example.org/1</link><guid>1</guid></item>
<item><title>Second headline</title><link>https://example.org/2</link><guid>2</guid></item>
</channel></rss>]]

describe("news", function()
  it("shows the headlines of the feeds given", function()
    fake.http { ["GET https://example.org/feed.xml"] = { status = 200, headers = { ["content-type"] = "application/rss+xml" }, body = feed } }
    script("scripts/news.lua", "https://example.org/feed.xml")
    clock.advance(0)
    local text = view_text()
    assert.matches("First headline", text)
    assert.matches("Second headline", text)
    assert.matches("1 feed", text)
  end)

  it("shows a headline's text on enter and goes back on esc", function()
    fake.http { ["GET https://example.org/feed.xml"] = { status = 200, headers = { ["content-type"] = "application/rss+xml" }, body = feed } }
    script("scripts/news.lua", "https://example.org/feed.xml")
    clock.advance(0)
    press("down", "enter")
    clock.advance(0)
    -- The second row's headline (the newest first), its feed and link.
    local title = screen_text(60, 8):match("^News › (%a+ headline)\nExample News\nhttps://example%.org/%d\n")
    assert.truthy(title)
    press("esc")
    clock.advance(0)
    assert.matches(">%s+2 .-" .. title, screen_text(100, 10))
  end)

  it("shows the feeds, a feed's items and an item's text as the golden screens do", function()
    fake.http { ["GET https://example.org/feed.xml"] = { status = 200, headers = { ["content-type"] = "application/rss+xml" }, body = feed } }
    script("scripts/news.lua", "https://example.org/feed.xml")
    clock.advance(0)
    assert.view("spec/golden/news.txt")
    assert.view("spec/golden/news-screen.txt", { width = 80, height = 10 })
    press("down", "enter")
    clock.advance(0)
    assert.view("spec/golden/news-item.txt", { width = 80, height = 10 })
  end)

  it("says which feed fails", function()
    fake.http { ["GET https://example.org/feed.xml"] = { status = 404, body = "not here" } }
    script("scripts/news.lua", "https://example.org/feed.xml")
    clock.advance(0)
    assert.matches("404", view_text())
  end)

  it("asks for feeds when none is given", function()
    script("scripts/news.lua")
    clock.advance(0)
    assert.matches("no feeds yet", view_text())
  end)
end)

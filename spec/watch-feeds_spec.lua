-- watch-feeds.lua prints each new item as a tab-separated line, oldest first.
local feed = [[<?xml version="1.0"?>
<rss version="2.0"><channel><title>Example News</title><link>https://example.org/</link>
<item><title>Newer</title><link>https://example.org/2</link><guid>2</guid><pubDate>Thu, 01 Jan 2026 12:00:00 GMT</pubDate></item>
<item><title>Older</title><link>https://example.org/1</link><guid>1</guid><pubDate>Thu, 01 Jan 2026 08:00:00 GMT</pubDate></item>
</channel></rss>]]

describe("watch-feeds", function()
  it("prints the items of each feed oldest first", function()
    fake.http { ["GET https://example.org/feed.xml"] = { body = feed } }
    local printed = spy.on(_G, "print")
    script("scripts/watch-feeds.lua", "--once", "https://example.org/feed.xml")
    clock.advance(0)
    assert.spy(printed).was.called(2)
    assert.same({ "2026-01-01T08:00:00Z\tExample News\tOlder\thttps://example.org/1" }, { printed.calls[1][1] })
    assert.same({ "2026-01-01T12:00:00Z\tExample News\tNewer\thttps://example.org/2" }, { printed.calls[2][1] })
  end)

  it("polls the feed again at the interval given", function()
    local fetches = 0
    fake.http { ["GET https://example.org/feed.xml"] = function() fetches = fetches + 1; return { body = feed } end }
    script("scripts/watch-feeds.lua", "--interval", "300", "https://example.org/feed.xml")
    clock.advance(0)
    assert.equals(1, fetches)
    -- Polls at 300, 600, ..., 3600 s: each runs when time reaches it, whatever the machine's speed.
    clock.advance(3600)
    assert.equals(13, fetches)
    clock.advance(299)
    assert.equals(13, fetches)
    clock.advance(1)
    assert.equals(14, fetches)
  end)
end)

import Model
import PostgresNIO

/// The feeds service's subscriptions and seen items in the store's PostgreSQL database
/// (`crescent_feed_subscriptions`, `crescent_feed_items`, see ``PostgresSchema``), so every host
/// on that database follows the same feeds and announces each item once.
struct PostgresFeedArchive: FeedArchive {
    let backend: PostgresBackend

    private static let feedColumns = "url, title, \"interval\", etag, last_modified, last_checked, item_count"

    func feeds() throws(ServiceError) -> [StoredFeed] {
        let result = try backend.execute(PostgresQuery(unsafeSQL: """
            SELECT \(Self.feedColumns) FROM crescent_feed_subscriptions ORDER BY added, url
            """), doing: "reading its feeds")
        var feeds: [StoredFeed] = []
        for row in result { feeds.append(try feed(row)) }
        return feeds
    }

    func subscribe(_ url: String, interval: Double, now: Double) throws(ServiceError) -> StoredFeed {
        let result = try backend.execute("""
            INSERT INTO crescent_feed_subscriptions AS s (url, "interval", added) VALUES (\(url), \(interval), \(now))
            ON CONFLICT (url) DO UPDATE SET "interval" = EXCLUDED."interval"
            RETURNING s.url, s.title, s."interval", s.etag, s.last_modified, s.last_checked, s.item_count
            """, doing: "subscribing to a feed")
        for row in result { return try feed(row) }
        throw ServiceError(.internal, "the subscription to \(url) was not stored")
    }

    func unsubscribe(_ url: String) throws(ServiceError) {
        _ = try backend.execute("""
            WITH items AS (DELETE FROM crescent_feed_items WHERE feed = \(url))
            DELETE FROM crescent_feed_subscriptions WHERE url = \(url)
            """, doing: "unsubscribing from a feed")
    }

    /// One transaction: the feed's state, the items (those inserted are the new ones), then the
    /// pruning, which must see the items just inserted.
    func record(_ feed: StoredFeed, items: [FeedItem], now: Double) throws(ServiceError) -> [FeedItem] {
        let given = Value.array(items.map { item in
            .object(["id": .string(item.id), "published": item.published.map(Value.number) ?? .null, "title": .string(item.title),
                     "link": item.link.map(Value.string) ?? .null, "summary": .string(item.summary), "feed_title": .string(item.feedTitle)])
        }).jsonText
        let current = items.map(\.id)
        let doing = "recording a fetch of \(feed.url)"
        let inserted = try backend.inTransaction(doing: doing) { () throws(ServiceError) -> Set<String> in
            _ = try backend.run("""
                UPDATE crescent_feed_subscriptions SET title = \(feed.title), etag = \(feed.etag), last_modified = \(feed.lastModified),
                    last_checked = \(feed.lastChecked), item_count = \(Int64(feed.itemCount))
                WHERE url = \(feed.url)
                """, doing: doing)
            let result = try backend.run("""
                INSERT INTO crescent_feed_items (feed, id, seen, published, title, link, summary, feed_title)
                SELECT \(feed.url), item.id, \(now), item.published, item.title, item.link, item.summary, item.feed_title
                FROM ROWS FROM (jsonb_to_recordset(\(given)::jsonb)
                    AS (id text, published double precision, title text, link text, summary text, feed_title text))
                    WITH ORDINALITY AS item(id, published, title, link, summary, feed_title, position)
                ORDER BY item.position
                ON CONFLICT (feed, id) DO NOTHING
                RETURNING id
                """, doing: doing)
            var inserted = Set<String>()
            for row in result { inserted.insert(try backend.decode { try row.decode(String.self) }) }
            _ = try backend.run("""
                DELETE FROM crescent_feed_items WHERE feed = \(feed.url) AND seq IN (
                    SELECT seq FROM crescent_feed_items WHERE feed = \(feed.url) AND NOT (id = ANY(\(current)))
                    ORDER BY seen, seq
                    LIMIT GREATEST((SELECT count(*) FROM crescent_feed_items WHERE feed = \(feed.url)) - \(Int64(Self.keptPerFeed)), 0)
                )
                """, doing: doing)
            return inserted
        }
        // In document order, an id given twice counted once (as on SQLite).
        var fresh = inserted
        return items.filter { fresh.remove($0.id) != nil }
    }

    func touch(_ url: String, checked: Double) throws(ServiceError) {
        _ = try backend.execute("UPDATE crescent_feed_subscriptions SET last_checked = \(checked) WHERE url = \(url)",
                                doing: "recording a fetch of \(url)")
    }

    func latest(limit: Int) throws(ServiceError) -> [FeedItem] {
        let result = try backend.execute("""
            SELECT i.id, i.title, i.link, i.published, i.summary, i.feed, i.feed_title
            FROM crescent_feed_items i JOIN crescent_feed_subscriptions s ON s.url = i.feed
            ORDER BY coalesce(i.published, i.seen) DESC, i.seq DESC LIMIT \(Int64(limit))
            """, doing: "reading its feeds")
        var items: [FeedItem] = []
        for row in result {
            let (id, title, link, published, summary, feed, feedTitle) = try backend.decode {
                try row.decode((String, String, String?, Double?, String, String, String).self)
            }
            items.append(FeedItem(id: id, title: title, link: link, published: published, summary: summary, feed: feed, feedTitle: feedTitle))
        }
        return items
    }

    private func feed(_ row: PostgresRow) throws(ServiceError) -> StoredFeed {
        let (url, title, interval, etag, lastModified, lastChecked, itemCount) = try backend.decode {
            try row.decode((String, String, Double, String?, String?, Double?, Int64).self)
        }
        return StoredFeed(url: url, title: title, interval: interval, etag: etag, lastModified: lastModified,
                          lastChecked: lastChecked, itemCount: Int(clamping: itemCount))
    }
}

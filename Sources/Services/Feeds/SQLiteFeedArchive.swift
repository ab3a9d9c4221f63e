import GRDB
import Model

/// The feeds service's subscriptions and seen items in the store's SQLite database.
///
/// An item is new exactly when its `(feed, id)` row is inserted: the check and the insert are
/// one statement in one transaction, so two fetches of the same feed, even in two processes
/// sharing the database, never both announce it.
struct SQLiteFeedArchive: FeedArchive {
    static let schema = [
        """
        CREATE TABLE IF NOT EXISTS feed_subscriptions (
            url TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            interval REAL NOT NULL,
            etag TEXT,
            last_modified TEXT,
            last_checked REAL,
            item_count INTEGER NOT NULL DEFAULT 0,
            added REAL NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS feed_items (
            feed TEXT NOT NULL,
            id TEXT NOT NULL,
            seen REAL NOT NULL,
            published REAL,
            title TEXT NOT NULL,
            link TEXT,
            summary TEXT NOT NULL,
            feed_title TEXT NOT NULL,
            PRIMARY KEY (feed, id)
        )
        """,
        "CREATE INDEX IF NOT EXISTS feed_items_by_date ON feed_items (coalesce(published, seen))",
    ]

    let database: StoreDatabase

    /// The subscribed feeds, in the order they were added.
    func feeds() throws(ServiceError) -> [StoredFeed] {
        try database.read(Self.feeds)
    }

    private static func feeds(_ db: Database) throws -> [StoredFeed] {
        try Row.fetchAll(db, sql: """
            SELECT url, title, interval, etag, last_modified, last_checked, item_count
            FROM feed_subscriptions ORDER BY added, url
            """).map { row in
            StoredFeed(url: row[0], title: row[1], interval: row[2], etag: row[3], lastModified: row[4],
                       lastChecked: row[5], itemCount: row[6])
        }
    }

    /// On the writer connection when the database opens without waiting and nothing is queued
    /// on it (a read there needs no lock, the database being in WAL mode).
    func snapshotIfFree(latest: Int) -> Result<FeedSnapshot, ServiceError>? {
        do throws(ServiceError) {
            return try database.onWriterIfFree { db in try Self.snapshot(latest: latest, db) }.map { .success($0) }
        } catch {
            return .failure(error)
        }
    }

    /// On the writer queue, after the database opens off the calling thread.
    func snapshotLater(latest: Int, done: @escaping @Sendable (Result<FeedSnapshot, ServiceError>) -> Void) {
        let database = self.database
        database.enqueueOpening { opened in
            done(Result { () throws(ServiceError) in
                let db = try opened.get()
                return try database.mapErrors { try Self.snapshot(latest: latest, db) }
            })
        }
    }

    private static func snapshot(latest: Int, _ db: Database) throws -> FeedSnapshot {
        FeedSnapshot(feeds: try feeds(db), latest: try Self.latest(limit: latest, db))
    }

    /// Subscribes to `url` (or changes its interval), keeping what is known of it.
    func subscribe(_ url: String, interval: Double, now: Double) throws(ServiceError) -> StoredFeed {
        try database.write({ db in
            try db.execute(sql: """
                INSERT INTO feed_subscriptions (url, interval, added) VALUES (?, ?, ?)
                ON CONFLICT (url) DO UPDATE SET interval = excluded.interval
                """, arguments: [url, interval, now])
            guard let row = try Row.fetchOne(db, sql: """
                SELECT url, title, interval, etag, last_modified, last_checked, item_count FROM feed_subscriptions WHERE url = ?
                """, arguments: [url]) else {
                throw ServiceError(.internal, "the subscription to \(url) was not stored")
            }
            return StoredFeed(url: row[0], title: row[1], interval: row[2], etag: row[3], lastModified: row[4],
                              lastChecked: row[5], itemCount: row[6])
        }, committed: { $0 })
    }

    /// Forgets `url` and its items.
    func unsubscribe(_ url: String) throws(ServiceError) {
        try database.write(Self.unsubscription(url, size: 1))
    }

    /// A write on the loop when it cannot wait (see ``StoreDatabase/writeIfImmediate(_:mayCommit:)``),
    /// else queued on the writer.
    func unsubscribeWithoutWaiting(_ url: String, size: Int, done: @escaping @Sendable (Result<Void, ServiceError>) -> Void) {
        let write = Self.unsubscription(url, size: size)
        if let outcome = database.writeIfImmediate(write) { return done(outcome) }
        database.writeLater({ () throws(ServiceError) in write }, unlessCancelled: { false }, done: done)
    }

    private static func unsubscription(_ url: String, size: Int) -> StoreWrite<Void, Void> {
        StoreWrite(size: size, change: { db in
            try db.execute(sql: "DELETE FROM feed_subscriptions WHERE url = ?", arguments: [url])
            try db.execute(sql: "DELETE FROM feed_items WHERE feed = ?", arguments: [url])
        }, committed: { _ in })
    }

    /// Records a fetch that got a document: the feed's new state, and the items; returns those
    /// never seen before, in document order.
    func record(_ feed: StoredFeed, items: [FeedItem], now: Double) throws(ServiceError) -> [FeedItem] {
        try database.write({ db in
            try db.execute(sql: """
                UPDATE feed_subscriptions SET title = ?, etag = ?, last_modified = ?, last_checked = ?, item_count = ?
                WHERE url = ?
                """, arguments: [feed.title, feed.etag, feed.lastModified, feed.lastChecked, feed.itemCount, feed.url])
            let insert = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO feed_items (feed, id, seen, published, title, link, summary, feed_title)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            var fresh: [FeedItem] = []
            for item in items {
                try insert.execute(arguments: [feed.url, item.id, now, item.published, item.title, item.link, item.summary, item.feedTitle])
                if db.changesCount == 1 { fresh.append(item) }
            }
            try prune(feed.url, keeping: Set(items.map(\.id)), db)
            return fresh
        }, committed: { $0 })
    }

    /// Records a fetch that changed nothing (304) or failed: only when it was last checked.
    func touch(_ url: String, checked: Double) throws(ServiceError) {
        try database.write({ db in
            try db.execute(sql: "UPDATE feed_subscriptions SET last_checked = ? WHERE url = ?", arguments: [checked, url])
        }, committed: { _ in })
    }

    /// The `limit` newest items of the subscribed feeds (by date, else by when first seen).
    func latest(limit: Int) throws(ServiceError) -> [FeedItem] {
        try database.read { db in try Self.latest(limit: limit, db) }
    }

    private static func latest(limit: Int, _ db: Database) throws -> [FeedItem] {
        try Row.fetchAll(db, sql: """
            SELECT i.id, i.title, i.link, i.published, i.summary, i.feed, i.feed_title
            FROM feed_items i JOIN feed_subscriptions s ON s.url = i.feed
            ORDER BY coalesce(i.published, i.seen) DESC, i.rowid DESC LIMIT ?
            """, arguments: [limit]).map { row in
            FeedItem(id: row[0], title: row[1], link: row[2], published: row[3], summary: row[4], feed: row[5], feedTitle: row[6])
        }
    }

    /// Deletes the oldest items of `url` that its document no longer holds, down to
    /// ``keptPerFeed`` rows.
    private func prune(_ url: String, keeping current: Set<String>, _ db: Database) throws {
        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM feed_items WHERE feed = ?", arguments: [url]) ?? 0
        guard count > Self.keptPerFeed else { return }
        var excess = count - Self.keptPerFeed
        let oldest = try String.fetchAll(db, sql: "SELECT id FROM feed_items WHERE feed = ? ORDER BY seen, rowid", arguments: [url])
        let delete = try db.cachedStatement(sql: "DELETE FROM feed_items WHERE feed = ? AND id = ?")
        for id in oldest where excess > 0 && !current.contains(id) {
            try delete.execute(arguments: [url, id])
            excess -= 1
        }
    }
}

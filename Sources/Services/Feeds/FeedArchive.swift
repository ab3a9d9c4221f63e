import Model

/// What the feeds service keeps next to the store's records, so a restart neither forgets a
/// feed nor announces an item again: the subscribed feeds with their HTTP validators, and every
/// item seen, per feed. In the store's SQLite file (``SQLiteFeedArchive``) or its PostgreSQL
/// database (``PostgresFeedArchive``), so hosts sharing a database share their feeds.
///
/// An item is new exactly when its `(feed, id)` row is inserted, the check and the insert being
/// one statement: two fetches of the same feed, even by two hosts, never both announce it.
protocol FeedArchive: Sendable {
    /// The subscribed feeds, in the order they were added.
    func feeds() throws(ServiceError) -> [StoredFeed]

    /// Subscribes to `url` (or changes its interval), keeping what is known of it.
    func subscribe(_ url: String, interval: Double, now: Double) throws(ServiceError) -> StoredFeed

    /// Forgets `url` and its items.
    func unsubscribe(_ url: String) throws(ServiceError)

    /// Records a fetch that got a document: the feed's new state, and the items; returns those
    /// never seen before, in document order.
    func record(_ feed: StoredFeed, items: [FeedItem], now: Double) throws(ServiceError) -> [FeedItem]

    /// Records a fetch that changed nothing (304) or failed: only when it was last checked.
    func touch(_ url: String, checked: Double) throws(ServiceError)

    /// The `limit` newest items of the subscribed feeds (by date, else by when first seen).
    func latest(limit: Int) throws(ServiceError) -> [FeedItem]

    /// The subscribed feeds and the `latest` newest items, read here and now when nothing can
    /// make that wait (another process's lock on the database, writes queued before it); nil
    /// when it did not read. For the host's loop.
    func snapshotIfFree(latest: Int) -> Result<FeedSnapshot, ServiceError>?

    /// Reads the same off the calling thread, waiting there for another process's lock, and
    /// calls `done` with it (on a thread of the archive's).
    func snapshotLater(latest: Int, done: @escaping @Sendable (Result<FeedSnapshot, ServiceError>) -> Void)

    /// Forgets `url` and its items (about `size` rows) here and now when nothing can make that
    /// wait, else off the calling thread, after what was queued before it; calls `done` when
    /// finished, on either thread.
    func unsubscribeWithoutWaiting(_ url: String, size: Int, done: @escaping @Sendable (Result<Void, ServiceError>) -> Void)
}

/// The subscriptions and the newest items, read together.
struct FeedSnapshot: Sendable {
    var feeds: [StoredFeed]
    var latest: [FeedItem]
}

extension FeedArchive {
    /// An archive with no way to answer later answers at once, waiting as its other calls do.
    func snapshotIfFree(latest: Int) -> Result<FeedSnapshot, ServiceError>? {
        Result { () throws(ServiceError) in FeedSnapshot(feeds: try feeds(), latest: try self.latest(limit: latest)) }
    }

    func snapshotLater(latest: Int, done: @escaping @Sendable (Result<FeedSnapshot, ServiceError>) -> Void) {
        done(snapshotIfFree(latest: latest) ?? .failure(ServiceError(.internal, "the feeds could not be read")))
    }

    func unsubscribeWithoutWaiting(_ url: String, size: Int, done: @escaping @Sendable (Result<Void, ServiceError>) -> Void) {
        done(Result { () throws(ServiceError) in try unsubscribe(url) })
    }

    /// Items kept per feed beyond those its last document holds: enough to recognise entries a
    /// feed drops and brings back, bounded so the table does not grow for ever.
    static var keptPerFeed: Int { 1_000 }
}

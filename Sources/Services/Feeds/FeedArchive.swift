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
}

extension FeedArchive {
    /// Items kept per feed beyond those its last document holds: enough to recognise entries a
    /// feed drops and brings back, bounded so the table does not grow for ever.
    static var keptPerFeed: Int { 1_000 }
}

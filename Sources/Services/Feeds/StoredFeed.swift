/// A subscription as a ``FeedArchive`` stores it.
struct StoredFeed: Sendable, Equatable {
    var url: String
    var title: String
    var interval: Double
    var etag: String?
    var lastModified: String?
    /// Seconds since the epoch of the last fetch that got an answer.
    var lastChecked: Double?
    /// How many items the last document held.
    var itemCount: Int
}

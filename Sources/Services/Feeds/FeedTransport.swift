public import Model

/// How the feeds service fetches a document: one conditional GET, redirects followed.
///
/// The service talks to this protocol only (``HTTPFeedTransport`` fetches through the `http`
/// service), so tests and other hosts can give it another.
public protocol FeedTransport: Sendable {
    /// Fetches `request.url`. Statuses are results (a 304 or a 404 is a response); a failure to
    /// get any response throws (`network`, `timeout`, `io` for a body over the limit,
    /// `invalid_argument` for a URL the transport cannot fetch, `cancelled`).
    func fetch(_ request: FeedRequest) async throws(ServiceError) -> FeedResponse
}

/// A conditional GET of a feed.
public struct FeedRequest: Sendable, Equatable {
    public var url: String
    /// Sent as `If-None-Match` when set.
    public var etag: String?
    /// Sent as `If-Modified-Since` when set.
    public var lastModified: String?
    /// Seconds for the whole exchange, redirects included; nil for the transport's default.
    public var timeout: Double?
    /// A body longer than this fails with `io`; nil for the transport's default.
    public var maxBytes: Int?

    public init(url: String, etag: String? = nil, lastModified: String? = nil, timeout: Double? = nil, maxBytes: Int? = nil) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.timeout = timeout
        self.maxBytes = maxBytes
    }

    /// The request headers: what any feed fetch sends, and the conditional ones when known.
    public var headers: [(name: String, value: String)] {
        var headers = [
            (name: "User-Agent", value: "crescent-feeds/1"),
            (name: "Accept", value: "application/feed+json, application/atom+xml, application/rss+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"),
        ]
        if let etag { headers.append((name: "If-None-Match", value: etag)) }
        if let lastModified { headers.append((name: "If-Modified-Since", value: lastModified)) }
        return headers
    }
}

/// What a fetch got.
public struct FeedResponse: Sendable, Equatable {
    public var status: Int
    /// Header names in lower case; the last value of a repeated header wins.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

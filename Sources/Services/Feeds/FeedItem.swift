public import Model

/// One entry of a feed, as scripts see it: `item { id, title, link, published, summary, feed,
/// feedTitle }`.
///
/// - `id`: the entry's own id (RSS `guid`, Atom `id`, JSON Feed `id`); without one, its link;
///   without a link, a stable hash of its title and summary (`hash:…`).
/// - `title` and `summary` are plain text, on one line: character references decoded, HTML
///   tags dropped (where the feed marks the field as HTML, and always in RSS, whose titles and
///   descriptions carry markup in practice), whitespace (no-break spaces too) folded into single
///   spaces; the summary is cut at ``maxSummaryLength`` characters (with `…`).
/// - `link`: absolute, resolved against `xml:base` and the feed's URL; nil when there is none.
/// - `published`: seconds since the epoch, or nil when the feed gives no date it can read.
/// - `feed`: the URL of the feed it came from (as it was added); `feedTitle` that feed's title.
public struct FeedItem: Sendable, Hashable {
    public var id: String
    public var title: String
    public var link: String?
    public var published: Double?
    public var summary: String
    /// The feed's URL (with its user information: scripts see it as `***@`, ``value``).
    public var feed: String
    public var feedTitle: String

    /// Summaries longer than this many characters are cut: a summary is for a list, not for
    /// reading the whole article (which some feeds put in it).
    public static let maxSummaryLength = 1_000

    /// The read-only `item` data model scripts get.
    public var value: Value {
        .model(DataModel(Self.schema, [
            .string(id), .string(title), link.map(Value.string) ?? .null,
            published.map(Value.number) ?? .null, .string(summary),
            // The feed's password never reaches scripts or logs (`http://***@host/feed`).
            .string(HTTPTarget.redacted(feed)), .string(feedTitle),
        ]))
    }

    /// The fields of ``value``'s data model, declared once, so a misspelled read of one
    /// (`item.titel`) is named with the fields it has.
    static let schema = ModelSchema("item", ["id", "title", "link", "published", "summary", "feed", "feedTitle"])
}

/// What a parsed feed document holds: its title and entries, in document order.
public struct ParsedFeed: Sendable, Equatable {
    /// The feed's title (empty when it has none).
    public var title: String
    /// The feed's own site (RSS `link`, Atom alternate link, JSON Feed `home_page_url`), absolute.
    public var homePage: String?
    /// The entries, each id once (the first of duplicates kept).
    public var items: [FeedItem]
    /// Which grammar it was read with: `rss`, `rdf`, `atom` or `json`.
    public var format: String
}

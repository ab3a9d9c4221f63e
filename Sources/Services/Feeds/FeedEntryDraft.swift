import Foundation

/// One entry as read from a document, before it becomes a ``FeedItem``: the raw strings of its
/// fields, whichever grammar they came from.
struct FeedEntryDraft {
    var id: String?
    var title: String?
    /// The title is HTML (Atom `type="html"` or `"xhtml"`), not text.
    var titleIsHTML = false
    /// Already absolute (resolved where it was read, against the base in force there).
    var link: String?
    var published: String?
    var updated: String?
    var summary: String?
    var summaryIsHTML = true
    /// The full content (`content:encoded`, Atom `content`, `content_html`), used as the summary
    /// when there is no summary.
    var content: String?
    var contentIsHTML = true

    /// The finished item of feed `feed`.
    func item(feed: String, feedTitle: String) -> FeedItem? {
        let title = titleIsHTML ? HTMLText.plainText(fromHTML: title ?? "")
                                : HTMLText.collapsingWhitespace(HTMLText.decodingEntities(title ?? ""))
        let summary = Self.shortened(Self.text(summary, isHTML: summaryIsHTML) ?? Self.text(content, isHTML: contentIsHTML) ?? "")
        let link = link.flatMap { $0.isEmpty ? nil : $0 }
        let ownID = id.map(HTMLText.trimmed).flatMap { $0.isEmpty ? nil : $0 }
        guard let id = ownID ?? link ?? Self.hashID(title: title, summary: summary) else { return nil }
        return FeedItem(id: id, title: title, link: link, published: (published ?? updated).flatMap(FeedDate.parse),
                        summary: summary, feed: feed, feedTitle: feedTitle)
    }

    /// The plain text of a field, nil when it is missing or blank.
    private static func text(_ raw: String?, isHTML: Bool) -> String? {
        guard let raw else { return nil }
        let text = isHTML ? HTMLText.plainText(fromHTML: raw) : HTMLText.collapsingWhitespace(HTMLText.decodingEntities(raw))
        return text.isEmpty ? nil : text
    }

    private static func shortened(_ text: String) -> String {
        guard text.count > FeedItem.maxSummaryLength else { return text }
        return String(text.prefix(FeedItem.maxSummaryLength - 1)) + "…"
    }

    /// A stable id for an entry without id or link: `hash:` and the FNV-1a 64-bit hash of its
    /// title and summary (the same text gives the same id in every run); nil for an empty entry.
    static func hashID(title: String, summary: String) -> String? {
        guard !title.isEmpty || !summary.isEmpty else { return nil }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in title.utf8 + [0] + summary.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return "hash:" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// `link` made absolute against `base` (itself absolute); empty when it cannot be resolved
    /// or is not an http or https link. Links reach `open` in scripts: a `javascript:`, `file:`
    /// or `data:` link from a feed is never passed on.
    static func resolve(_ link: String, against base: URL?) -> String {
        let trimmed = HTMLText.trimmed(link)
        guard !trimmed.isEmpty, let url = URL(string: trimmed, relativeTo: base),
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return "" }
        return url.absoluteString
    }
}

extension [FeedEntryDraft] {
    /// The items of these drafts, each id once (the first kept), skipping empty entries.
    func items(feed: String, feedTitle: String) -> [FeedItem] {
        var seen = Set<String>()
        var items: [FeedItem] = []
        items.reserveCapacity(count)
        for draft in self {
            guard let item = draft.item(feed: feed, feedTitle: feedTitle), seen.insert(item.id).inserted else { continue }
            items.append(item)
        }
        return items
    }
}
